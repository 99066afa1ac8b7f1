"""Types of the Qhronos API, generated from internal/api/openapi.json by
sdk/python/gen_types.py. Do not edit: run `sdk/generate.sh`.

Every object is a TypedDict: answers are plain dicts (event["id"]).
"""
# fmt: off
from typing import Any, Dict, List, Literal, Optional, TypedDict

__all__ = ["Action", "Attempt", "AttemptPage", "AttemptRequest", "BackfillRequest", "BackfillResult", "Calendar", "CalendarInput", "CircuitEntry", "CircuitHistoryPage", "Concurrency", "ConcurrencyKey", "ConcurrencyKeyPage", "DateRange", "Delivery", "DeliveryPage", "Endpoint", "EndpointAuth", "EndpointAuthInput", "EndpointCircuit", "EndpointHealth", "EndpointInput", "EndpointPatch", "EndpointRateLimit", "EndpointTestResult", "Error", "Event", "EventBatchInput", "EventBatchItemResult", "EventBatchResult", "EventInput", "EventUpsertInput", "Exception", "FanoutSummary", "Health", "HistoryChange", "HistoryEntry", "HistoryPage", "NoticePage", "NotificationChannel", "NotificationChannelRequest", "NotificationTestResult", "Occurrence", "OccurrenceOrder", "OccurrencePage", "PauseRequest", "PortalLink", "PortalLinkRequest", "PortalRedeemRequest", "PortalSession", "Preview", "PreviewRequest", "PunctualityCounts", "PunctualityGroup", "PunctualityPoint", "PunctualityReport", "Ready", "ReplayRequest", "ResumeRequest", "Retry", "RetryFilter", "RetryResult", "Run", "RunReport", "Schedule", "SecretRotation", "SentNotice", "Stats", "Status", "Subscription", "SubscriptionPage", "SubscriptionRequest", "Timeline", "Token", "TokenRequest", "Topic", "TopicPage", "TopicRequest"]


_ActionRequired = TypedDict("_ActionRequired", {"type": Literal["webhook", "websocket", "apicall", "nats", "amqp", "kafka", "redis_stream", "topic"]})
_ActionOptional = TypedDict("_ActionOptional", {"params": Dict[str, Any]}, total=False)


class Action(_ActionRequired, _ActionOptional):
    """The Action schema."""


_AttemptRequired = TypedDict("_AttemptRequired", {"id": str, "occurrence_id": str, "attempt": int, "started_at": str, "outcome": str})
_AttemptOptional = TypedDict("_AttemptOptional", {"manual": bool, "duration_ms": int, "status_code": Optional[int], "error": Optional[str], "response_excerpt": Optional[str], "truncated": bool, "lateness_ms": int, "request": Optional['AttemptRequest'], "subscription_id": str}, total=False)


class Attempt(_AttemptRequired, _AttemptOptional):
    """The Attempt schema."""


_AttemptPageRequired = TypedDict("_AttemptPageRequired", {"data": List['Attempt'], "pagination": Dict[str, Any]})
_AttemptPageOptional = TypedDict("_AttemptPageOptional", {}, total=False)


class AttemptPage(_AttemptPageRequired, _AttemptPageOptional):
    """The AttemptPage schema."""


_AttemptRequestRequired = TypedDict("_AttemptRequestRequired", {"method": str, "url": str, "headers": Dict[str, str], "body": str, "body_truncated": bool})
_AttemptRequestOptional = TypedDict("_AttemptRequestOptional", {}, total=False)


class AttemptRequest(_AttemptRequestRequired, _AttemptRequestOptional):
    """A recorded request. Broker attempts record method PUBLISH, the broker URL (credentials as fingerprints), the message headers and body."""


_BackfillRequestRequired = TypedDict("_BackfillRequestRequired", {"from": str, "to": str})
_BackfillRequestOptional = TypedDict("_BackfillRequestOptional", {"respect_exceptions": bool}, total=False)


class BackfillRequest(_BackfillRequestRequired, _BackfillRequestOptional):
    """The BackfillRequest schema."""


_BackfillResultRequired = TypedDict("_BackfillResultRequired", {"event_id": str, "from": str, "to": str, "instants": int, "created": int, "skipped": int, "existing": int})
_BackfillResultOptional = TypedDict("_BackfillResultOptional", {}, total=False)


class BackfillResult(_BackfillResultRequired, _BackfillResultOptional):
    """The BackfillResult schema."""


_CalendarRequired = TypedDict("_CalendarRequired", {"id": str, "name": str, "timezone": str, "dates": List[str], "ranges": List['DateRange'], "rrules": List[str], "tags": List[str], "version": int, "created_by": str, "created_at": str, "updated_at": str, "replan_pending": bool})
_CalendarOptional = TypedDict("_CalendarOptional", {}, total=False)


class Calendar(_CalendarRequired, _CalendarOptional):
    """The Calendar schema."""


_CalendarInputRequired = TypedDict("_CalendarInputRequired", {"name": str})
_CalendarInputOptional = TypedDict("_CalendarInputOptional", {"timezone": str, "dates": List[str], "ranges": List['DateRange'], "rrules": List[str], "tags": List[str]}, total=False)


class CalendarInput(_CalendarInputRequired, _CalendarInputOptional):
    """The CalendarInput schema."""


_CircuitEntryRequired = TypedDict("_CircuitEntryRequired", {"id": str, "at": str, "change": Literal["opened", "reopened", "closed", "disabled", "enabled"], "from_state": Literal["healthy", "degraded", "open", "disabled"], "to_state": Literal["healthy", "degraded", "open", "disabled"], "reason": str, "consecutive_failures": int, "subject": str, "channel": str})
_CircuitEntryOptional = TypedDict("_CircuitEntryOptional", {}, total=False)


class CircuitEntry(_CircuitEntryRequired, _CircuitEntryOptional):
    """One transition of an endpoint's circuit."""


_CircuitHistoryPageRequired = TypedDict("_CircuitHistoryPageRequired", {"data": List['CircuitEntry'], "pagination": Dict[str, Any]})
_CircuitHistoryPageOptional = TypedDict("_CircuitHistoryPageOptional", {}, total=False)


class CircuitHistoryPage(_CircuitHistoryPageRequired, _CircuitHistoryPageOptional):
    """The CircuitHistoryPage schema."""


_ConcurrencyRequired = TypedDict("_ConcurrencyRequired", {"key": str, "limit": int})
_ConcurrencyOptional = TypedDict("_ConcurrencyOptional", {}, total=False)


class Concurrency(_ConcurrencyRequired, _ConcurrencyOptional):
    """A concurrency key shared with every event naming it: at most limit occurrences of those events are in flight (being delivered, awaiting an acknowledgement, running or retrying) at once, installation-wide; the others wait, oldest instant first, pending with reason concurrency_wait. A key's limit is the smallest its live events name."""


_ConcurrencyKeyRequired = TypedDict("_ConcurrencyKeyRequired", {"key": str, "limit": int, "in_flight": int, "waiting": int, "paused": bool, "paused_at": Optional[str], "paused_by": Optional[str]})
_ConcurrencyKeyOptional = TypedDict("_ConcurrencyKeyOptional", {}, total=False)


class ConcurrencyKey(_ConcurrencyKeyRequired, _ConcurrencyKeyOptional):
    """The ConcurrencyKey schema."""


_ConcurrencyKeyPageRequired = TypedDict("_ConcurrencyKeyPageRequired", {"data": List['ConcurrencyKey'], "pagination": Dict[str, Any]})
_ConcurrencyKeyPageOptional = TypedDict("_ConcurrencyKeyPageOptional", {}, total=False)


class ConcurrencyKeyPage(_ConcurrencyKeyPageRequired, _ConcurrencyKeyPageOptional):
    """The ConcurrencyKeyPage schema."""


_DateRangeRequired = TypedDict("_DateRangeRequired", {"from": str, "to": str})
_DateRangeOptional = TypedDict("_DateRangeOptional", {}, total=False)


class DateRange(_DateRangeRequired, _DateRangeOptional):
    """The DateRange schema."""


_DeliveryRequired = TypedDict("_DeliveryRequired", {"subscription_id": str, "status": Literal["delivered", "failed", "pending", "filtered"], "attempts": List['Attempt']})
_DeliveryOptional = TypedDict("_DeliveryOptional", {"endpoint_id": Optional[str], "error": Optional[str], "next_attempt_at": Optional[str]}, total=False)


class Delivery(_DeliveryRequired, _DeliveryOptional):
    """one subscription's delivery of a fan-out occurrence"""


_DeliveryPageRequired = TypedDict("_DeliveryPageRequired", {"data": List['Delivery'], "pagination": Dict[str, Any]})
_DeliveryPageOptional = TypedDict("_DeliveryPageOptional", {}, total=False)


class DeliveryPage(_DeliveryPageRequired, _DeliveryPageOptional):
    """The DeliveryPage schema."""


_EndpointRequired = TypedDict("_EndpointRequired", {"id": str, "name": str, "description": str, "url": str, "headers": Dict[str, str], "rate_limit": Optional['EndpointRateLimit'], "max_concurrency": int, "timeout": Optional[str], "auth": Optional['EndpointAuth'], "circuit": Optional['EndpointCircuit'], "tags": List[str], "state": Literal["healthy", "degraded", "open", "disabled"], "disabled_reason": str, "state_changed_at": str, "opened_at": Optional[str], "cool_down_until": Optional[str], "health": 'EndpointHealth', "previous_secret_expires_at": Optional[str], "version": int, "created_by": str, "created_at": str, "updated_at": str})
_EndpointOptional = TypedDict("_EndpointOptional", {"secret": str, "resumed": int}, total=False)


class Endpoint(_EndpointRequired, _EndpointOptional):
    """The Endpoint schema."""


_EndpointAuthRequired = TypedDict("_EndpointAuthRequired", {"type": Literal["basic", "oauth2_client_credentials", "mtls"]})
_EndpointAuthOptional = TypedDict("_EndpointAuthOptional", {"username": str, "token_url": str, "client_id": str, "scopes": List[str], "audience": str, "certificate": str, "ca_certificate": str}, total=False)


class EndpointAuth(_EndpointAuthRequired, _EndpointAuthOptional):
    """the non-secret half of the outbound auth"""


_EndpointAuthInputRequired = TypedDict("_EndpointAuthInputRequired", {"type": Literal["basic", "oauth2_client_credentials", "mtls"]})
_EndpointAuthInputOptional = TypedDict("_EndpointAuthInputOptional", {"username": str, "token_url": str, "client_id": str, "scopes": List[str], "audience": str, "certificate": str, "ca_certificate": str, "password": str, "client_secret": str, "private_key": str}, total=False)


class EndpointAuthInput(_EndpointAuthInputRequired, _EndpointAuthInputOptional):
    """outbound auth by type; password, client_secret and private_key are write-only: omitted on PATCH while the type stays, they keep their stored value, except that a PATCH changing url must carry password or client_secret again (an OAuth2 endpoint's bearer tokens go to its url) and one changing token_url client_secret again (400 naming the secret otherwise)"""


_EndpointCircuitRequired = TypedDict("_EndpointCircuitRequired", {})
_EndpointCircuitOptional = TypedDict("_EndpointCircuitOptional", {"failures": int, "failure_ratio": float, "min_requests": int, "window": str, "cool_down": str, "disable_after": str}, total=False)


class EndpointCircuit(_EndpointCircuitRequired, _EndpointCircuitOptional):
    """overrides of the deployment's circuit breaker (endpoints.circuit); absent members take the defaults"""


_EndpointHealthRequired = TypedDict("_EndpointHealthRequired", {"attempts": int, "succeeded": int, "success_ratio": Optional[float], "since": str, "latency_ms": Dict[str, Any], "consecutive_failures": int, "last_error": Optional[str], "last_error_at": Optional[str], "last_success_at": Optional[str]})
_EndpointHealthOptional = TypedDict("_EndpointHealthOptional", {}, total=False)


class EndpointHealth(_EndpointHealthRequired, _EndpointHealthOptional):
    """the newest 1000 attempts of the last hour, and the circuit's record"""


_EndpointInputRequired = TypedDict("_EndpointInputRequired", {"name": str, "url": str})
_EndpointInputOptional = TypedDict("_EndpointInputOptional", {"description": str, "headers": Dict[str, str], "rate_limit": Optional['EndpointRateLimit'], "max_concurrency": int, "timeout": Optional[str], "auth": Optional['EndpointAuthInput'], "circuit": Optional['EndpointCircuit'], "tags": List[str], "secret": str}, total=False)


class EndpointInput(_EndpointInputRequired, _EndpointInputOptional):
    """The EndpointInput schema."""


_EndpointPatchRequired = TypedDict("_EndpointPatchRequired", {})
_EndpointPatchOptional = TypedDict("_EndpointPatchOptional", {"name": str, "description": str, "url": str, "headers": Dict[str, str], "rate_limit": Optional['EndpointRateLimit'], "max_concurrency": int, "timeout": Optional[str], "auth": Optional['EndpointAuthInput'], "circuit": Optional['EndpointCircuit'], "tags": List[str]}, total=False)


class EndpointPatch(_EndpointPatchRequired, _EndpointPatchOptional):
    """The EndpointPatch schema."""


_EndpointRateLimitRequired = TypedDict("_EndpointRateLimitRequired", {"per_second": float})
_EndpointRateLimitOptional = TypedDict("_EndpointRateLimitOptional", {"burst": int}, total=False)


class EndpointRateLimit(_EndpointRateLimitRequired, _EndpointRateLimitOptional):
    """The EndpointRateLimit schema."""


_EndpointTestResultRequired = TypedDict("_EndpointTestResultRequired", {"delivered": bool, "status_code": Optional[int], "duration_ms": int, "error": Optional[str], "response_excerpt": Optional[str], "truncated": bool})
_EndpointTestResultOptional = TypedDict("_EndpointTestResultOptional", {}, total=False)


class EndpointTestResult(_EndpointTestResultRequired, _EndpointTestResultOptional):
    """The answer of a test delivery to an endpoint"""


_ErrorRequired = TypedDict("_ErrorRequired", {"error": str})
_ErrorOptional = TypedDict("_ErrorOptional", {"field": str}, total=False)


class Error(_ErrorRequired, _ErrorOptional):
    """The Error schema."""


_EventRequired = TypedDict("_EventRequired", {"id": str, "name": str, "start_time": str, "timezone": str, "action": 'Action', "webhook": str, "tags": List[str], "status": Literal["active", "paused", "inactive", "deleted"], "version": int, "created_at": str, "updated_at": str})
_EventOptional = TypedDict("_EventOptional", {"description": str, "rrule": Optional[str], "schedule": Optional[Dict[str, Any]], "cron": Optional[str], "metadata": Any, "retry": Optional['Retry'], "catch_up": Literal["all", "latest", "none"], "timeout": Optional[str], "hmac_secret_set": bool, "created_by": str, "created_via": str, "next_run_at": Optional[str], "last_run_at": Optional[str], "last_status": str, "dst": Optional[Dict[str, Any]], "jitter": Optional[str], "calendars": Optional[List[Dict[str, Any]]], "paused_at": Optional[str], "paused_until": Optional[str], "pause_reason": str, "paused_by": str, "pause_catch_up": Literal["skip", "fire"], "endpoint_id": Optional[str], "trace_propagation": bool, "key": Optional[str], "debounce": Optional[str], "max_wait": Optional[str], "completion": Literal["response", "callback"], "max_runtime": Optional[str], "overlap": Literal["allow", "skip", "buffer_one", "buffer_all", "cancel_previous"], "concurrency": Optional['Concurrency'], "topic": Optional[str]}, total=False)


class Event(_EventRequired, _EventOptional):
    """Its action's params show sensitive values as fingerprints (header values, URL userinfo and query values, credential-named members, credential form/JSON bodies); sent back unchanged they keep the stored values."""


_EventBatchInputRequired = TypedDict("_EventBatchInputRequired", {"events": List['EventInput']})
_EventBatchInputOptional = TypedDict("_EventBatchInputOptional", {}, total=False)


class EventBatchInput(_EventBatchInputRequired, _EventBatchInputOptional):
    """The EventBatchInput schema."""


_EventBatchItemResultRequired = TypedDict("_EventBatchItemResultRequired", {"index": int, "status": int})
_EventBatchItemResultOptional = TypedDict("_EventBatchItemResultOptional", {"id": str, "event": 'Event', "error": str, "field": str}, total=False)


class EventBatchItemResult(_EventBatchItemResultRequired, _EventBatchItemResultOptional):
    """The EventBatchItemResult schema."""


_EventBatchResultRequired = TypedDict("_EventBatchResultRequired", {"results": List['EventBatchItemResult']})
_EventBatchResultOptional = TypedDict("_EventBatchResultOptional", {}, total=False)


class EventBatchResult(_EventBatchResultRequired, _EventBatchResultOptional):
    """The EventBatchResult schema."""


_EventInputRequired = TypedDict("_EventInputRequired", {})
_EventInputOptional = TypedDict("_EventInputOptional", {"name": str, "description": str, "start_time": str, "timezone": str, "rrule": Optional[str], "schedule": Optional['Schedule'], "cron": Optional[str], "action": 'Action', "webhook": str, "metadata": Any, "tags": List[str], "status": Literal["active", "paused", "inactive"], "hmac_secret": str, "retry": Optional['Retry'], "catch_up": Literal["all", "latest", "none"], "timeout": str, "trace_propagation": bool, "dst": Optional[Dict[str, Any]], "jitter": Optional[str], "calendars": Optional[List[Dict[str, Any]]], "completion": Literal["response", "callback"], "max_runtime": Optional[str], "overlap": Optional[Literal["allow", "skip", "buffer_one", "buffer_all", "cancel_previous"]], "concurrency": Optional['Concurrency'], "topic": str}, total=False)


class EventInput(_EventInputRequired, _EventInputOptional):
    """The EventInput schema."""


_EventUpsertInputRequired = TypedDict("_EventUpsertInputRequired", {})
_EventUpsertInputOptional = TypedDict("_EventUpsertInputOptional", {"name": str, "description": str, "start_time": str, "timezone": str, "rrule": Optional[str], "schedule": Optional['Schedule'], "cron": Optional[str], "action": 'Action', "webhook": str, "metadata": Any, "tags": List[str], "status": Literal["active", "paused", "inactive"], "hmac_secret": str, "retry": Optional['Retry'], "catch_up": Literal["all", "latest", "none"], "timeout": str, "trace_propagation": bool, "dst": Optional[Dict[str, Any]], "jitter": Optional[str], "calendars": Optional[List[Dict[str, Any]]], "debounce": str, "max_wait": str, "completion": Literal["response", "callback"], "max_runtime": Optional[str], "overlap": Optional[Literal["allow", "skip", "buffer_one", "buffer_all", "cancel_previous"]], "concurrency": Optional['Concurrency'], "topic": str}, total=False)


class EventUpsertInput(_EventUpsertInputRequired, _EventUpsertInputOptional):
    """An event body for PUT /events/by-key/{key}: a whole event, validated as a create, plus its debounce."""


_ExceptionRequired = TypedDict("_ExceptionRequired", {"at": str, "action": Literal["skip", "move"]})
_ExceptionOptional = TypedDict("_ExceptionOptional", {"to": str, "reason": str, "created_by": str, "created_at": str}, total=False)


class Exception(_ExceptionRequired, _ExceptionOptional):
    """The Exception schema."""


_FanoutSummaryRequired = TypedDict("_FanoutSummaryRequired", {"subscriptions": int, "delivered": int, "failed": int, "filtered": int, "pending": int})
_FanoutSummaryOptional = TypedDict("_FanoutSummaryOptional", {}, total=False)


class FanoutSummary(_FanoutSummaryRequired, _FanoutSummaryOptional):
    """the deliveries of an occurrence of an event that targets a topic, counted once its first round resolved the subscriptions (absent before, and for events that run an action)"""


_HealthRequired = TypedDict("_HealthRequired", {"status": str})
_HealthOptional = TypedDict("_HealthOptional", {}, total=False)


class Health(_HealthRequired, _HealthOptional):
    """The Health schema."""


_HistoryChangeRequired = TypedDict("_HistoryChangeRequired", {"from": Optional[Any], "to": Optional[Any]})
_HistoryChangeOptional = TypedDict("_HistoryChangeOptional", {}, total=False)


class HistoryChange(_HistoryChangeRequired, _HistoryChangeOptional):
    """A field's value before and after (null when absent); a sensitive value shows as its fingerprint ("••••" and 8 hex digits)."""


_HistoryEntryRequired = TypedDict("_HistoryEntryRequired", {"id": str, "at": str, "subject": str, "channel": str, "action": str, "reason": str, "changes": Optional[Dict[str, 'HistoryChange']]})
_HistoryEntryOptional = TypedDict("_HistoryEntryOptional", {}, total=False)


class HistoryEntry(_HistoryEntryRequired, _HistoryEntryOptional):
    """One change in an event's history."""


_HistoryPageRequired = TypedDict("_HistoryPageRequired", {"data": List['HistoryEntry'], "pagination": Dict[str, Any]})
_HistoryPageOptional = TypedDict("_HistoryPageOptional", {}, total=False)


class HistoryPage(_HistoryPageRequired, _HistoryPageOptional):
    """The HistoryPage schema."""


_NoticePageRequired = TypedDict("_NoticePageRequired", {"data": List['SentNotice'], "pagination": Dict[str, Any]})
_NoticePageOptional = TypedDict("_NoticePageOptional", {}, total=False)


class NoticePage(_NoticePageRequired, _NoticePageOptional):
    """The NoticePage schema."""


_NotificationChannelRequired = TypedDict("_NotificationChannelRequired", {"id": str, "name": str, "type": Literal["webhook", "email"], "secret_set": bool, "to": List[str], "kinds": List[Literal["circuit_opened", "circuit_closed", "endpoint_disabled", "delivery_failed", "run_failed", "run_timed_out", "missed", "series_ended", "dependency_unreachable", "dependency_recovered"]], "tags": List[str], "created_by": str, "created_at": str, "updated_at": str})
_NotificationChannelOptional = TypedDict("_NotificationChannelOptional", {"url": str, "secret": str}, total=False)


class NotificationChannel(_NotificationChannelRequired, _NotificationChannelOptional):
    """The NotificationChannel schema."""


_NotificationChannelRequestRequired = TypedDict("_NotificationChannelRequestRequired", {})
_NotificationChannelRequestOptional = TypedDict("_NotificationChannelRequestOptional", {"name": str, "type": Literal["webhook", "email"], "url": str, "secret": str, "to": List[str], "kinds": List[Literal["circuit_opened", "circuit_closed", "endpoint_disabled", "delivery_failed", "run_failed", "run_timed_out", "missed", "series_ended", "dependency_unreachable", "dependency_recovered"]], "tags": List[str]}, total=False)


class NotificationChannelRequest(_NotificationChannelRequestRequired, _NotificationChannelRequestOptional):
    """The NotificationChannelRequest schema."""


_NotificationTestResultRequired = TypedDict("_NotificationTestResultRequired", {"delivered": bool})
_NotificationTestResultOptional = TypedDict("_NotificationTestResultOptional", {"error": str}, total=False)


class NotificationTestResult(_NotificationTestResultRequired, _NotificationTestResultOptional):
    """The NotificationTestResult schema."""


_OccurrenceRequired = TypedDict("_OccurrenceRequired", {"id": str, "occurrence_id": str, "event_id": str, "scheduled_at": str, "status": Literal["pending", "dispatching", "retrying", "awaiting_ack", "running", "completed", "failed", "missed", "cancelled", "skipped", "timed_out"], "attempt_count": int})
_OccurrenceOptional = TypedDict("_OccurrenceOptional", {"manual": bool, "next_attempt_at": Optional[str], "status_code": Optional[int], "response_body": Optional[str], "error_message": Optional[str], "started_at": Optional[str], "completed_at": Optional[str], "created_at": str, "updated_at": str, "archived": bool, "archived_at": str, "reason": Optional[Literal["manual", "calendar", "paused", "dst_gap", "catch_up_window", "catch_up_policy", "event_deleted", "rule_changed", "endpoint_disabled", "overlap", "backfill", "concurrency_wait"]], "original_scheduled_at": Optional[str], "run": 'Run', "fanout": 'FanoutSummary'}, total=False)


class Occurrence(_OccurrenceRequired, _OccurrenceOptional):
    """The Occurrence schema."""


OccurrenceOrder = Literal["scheduled_at", "-scheduled_at"]

_OccurrencePageRequired = TypedDict("_OccurrencePageRequired", {"data": List['Occurrence'], "pagination": Dict[str, Any]})
_OccurrencePageOptional = TypedDict("_OccurrencePageOptional", {}, total=False)


class OccurrencePage(_OccurrencePageRequired, _OccurrencePageOptional):
    """The OccurrencePage schema."""


_PauseRequestRequired = TypedDict("_PauseRequestRequired", {})
_PauseRequestOptional = TypedDict("_PauseRequestOptional", {"until": Optional[str], "reason": str, "catch_up": Literal["skip", "fire"]}, total=False)


class PauseRequest(_PauseRequestRequired, _PauseRequestOptional):
    """The PauseRequest schema."""


_PortalLinkRequired = TypedDict("_PortalLinkRequired", {"url": str, "expires_at": str})
_PortalLinkOptional = TypedDict("_PortalLinkOptional", {}, total=False)


class PortalLink(_PortalLinkRequired, _PortalLinkOptional):
    """A one-time portal link; the URL is shown once and only its hash is stored."""


_PortalLinkRequestRequired = TypedDict("_PortalLinkRequestRequired", {"tags": List[str]})
_PortalLinkRequestOptional = TypedDict("_PortalLinkRequestOptional", {"expires_in": str, "return_url": str}, total=False)


class PortalLinkRequest(_PortalLinkRequestRequired, _PortalLinkRequestOptional):
    """The PortalLinkRequest schema."""


_PortalRedeemRequestRequired = TypedDict("_PortalRedeemRequestRequired", {"code": str})
_PortalRedeemRequestOptional = TypedDict("_PortalRedeemRequestOptional", {}, total=False)


class PortalRedeemRequest(_PortalRedeemRequestRequired, _PortalRedeemRequestOptional):
    """The PortalRedeemRequest schema."""


_PortalSessionRequired = TypedDict("_PortalSessionRequired", {"token": str, "expires_at": str, "tags": List[str], "return_url": Optional[str]})
_PortalSessionOptional = TypedDict("_PortalSessionOptional", {}, total=False)


class PortalSession(_PortalSessionRequired, _PortalSessionOptional):
    """A redeemed portal link: the portal session's bearer token and what the portal shows."""


_PreviewRequired = TypedDict("_PreviewRequired", {"timezone": str, "instants": List[Dict[str, Any]]})
_PreviewOptional = TypedDict("_PreviewOptional", {"reason": str}, total=False)


class Preview(_PreviewRequired, _PreviewOptional):
    """The Preview schema."""


_PreviewRequestRequired = TypedDict("_PreviewRequestRequired", {})
_PreviewRequestOptional = TypedDict("_PreviewRequestOptional", {"start_time": str, "timezone": str, "rrule": str, "schedule": 'Schedule', "cron": str, "count": int, "after": str, "dst": Optional[Dict[str, Any]], "jitter": Optional[str], "calendars": Optional[List[Dict[str, Any]]]}, total=False)


class PreviewRequest(_PreviewRequestRequired, _PreviewRequestOptional):
    """The PreviewRequest schema."""


_PunctualityCountsRequired = TypedDict("_PunctualityCountsRequired", {"due": int, "on_time": int, "late": int, "missed": int, "skipped": int, "cancelled": int, "completed": int, "failed": int, "pending": int, "lateness_ms": Dict[str, Any], "success_ratio": Optional[float], "on_time_ratio": Optional[float]})
_PunctualityCountsOptional = TypedDict("_PunctualityCountsOptional", {}, total=False)


class PunctualityCounts(_PunctualityCountsRequired, _PunctualityCountsOptional):
    """The PunctualityCounts schema."""


_PunctualityGroupRequired = TypedDict("_PunctualityGroupRequired", {"key": Optional[str], "name": str, "due": int, "on_time": int, "late": int, "missed": int, "skipped": int, "cancelled": int, "completed": int, "failed": int, "pending": int, "lateness_ms": Dict[str, Any], "success_ratio": Optional[float], "on_time_ratio": Optional[float]})
_PunctualityGroupOptional = TypedDict("_PunctualityGroupOptional", {}, total=False)


class PunctualityGroup(_PunctualityGroupRequired, _PunctualityGroupOptional):
    """The PunctualityGroup schema."""


_PunctualityPointRequired = TypedDict("_PunctualityPointRequired", {"start": str, "due": int, "on_time": int, "late": int, "missed": int, "skipped": int, "cancelled": int, "completed": int, "failed": int, "pending": int, "lateness_ms": Dict[str, Any], "success_ratio": Optional[float], "on_time_ratio": Optional[float]})
_PunctualityPointOptional = TypedDict("_PunctualityPointOptional", {}, total=False)


class PunctualityPoint(_PunctualityPointRequired, _PunctualityPointOptional):
    """The PunctualityPoint schema."""


_PunctualityReportRequired = TypedDict("_PunctualityReportRequired", {"from": str, "to": str, "group_by": Literal["event", "endpoint", "tag"], "tolerance_ms": int, "total": 'PunctualityCounts', "groups": List['PunctualityGroup'], "trend_step": Literal["1h", "1d"], "trend": List['PunctualityPoint']})
_PunctualityReportOptional = TypedDict("_PunctualityReportOptional", {}, total=False)


class PunctualityReport(_PunctualityReportRequired, _PunctualityReportOptional):
    """The PunctualityReport schema."""


_ReadyRequired = TypedDict("_ReadyRequired", {"status": Literal["ok", "degraded", "unavailable"], "database": str})
_ReadyOptional = TypedDict("_ReadyOptional", {"redis": str}, total=False)


class Ready(_ReadyRequired, _ReadyOptional):
    """The Ready schema."""


_ReplayRequestRequired = TypedDict("_ReplayRequestRequired", {})
_ReplayRequestOptional = TypedDict("_ReplayRequestOptional", {"subscription_id": str}, total=False)


class ReplayRequest(_ReplayRequestRequired, _ReplayRequestOptional):
    """The ReplayRequest schema."""


_ResumeRequestRequired = TypedDict("_ResumeRequestRequired", {})
_ResumeRequestOptional = TypedDict("_ResumeRequestOptional", {"catch_up": Literal["skip", "fire"]}, total=False)


class ResumeRequest(_ResumeRequestRequired, _ResumeRequestOptional):
    """The ResumeRequest schema."""


_RetryRequired = TypedDict("_RetryRequired", {})
_RetryOptional = TypedDict("_RetryOptional", {"max_attempts": int, "initial_backoff": str, "max_backoff": str, "retry_4xx": bool}, total=False)


class Retry(_RetryRequired, _RetryOptional):
    """The Retry schema."""


_RetryFilterRequired = TypedDict("_RetryFilterRequired", {})
_RetryFilterOptional = TypedDict("_RetryFilterOptional", {"event_id": str, "tags": List[str], "status": str, "since": str, "until": str, "limit": int, "status_code": int}, total=False)


class RetryFilter(_RetryFilterRequired, _RetryFilterOptional):
    """The RetryFilter schema."""


_RetryResultRequired = TypedDict("_RetryResultRequired", {"requeued": int, "limit_reached": bool})
_RetryResultOptional = TypedDict("_RetryResultOptional", {}, total=False)


class RetryResult(_RetryResultRequired, _RetryResultOptional):
    """The RetryResult schema."""


_RunRequired = TypedDict("_RunRequired", {"deadline": Optional[str], "heartbeat_at": Optional[str], "status": Optional[Literal["succeeded", "failed"]], "output": Optional[Any], "reported_at": Optional[str], "duration_ms": Optional[int]})
_RunOptional = TypedDict("_RunOptional", {}, total=False)


class Run(_RunRequired, _RunOptional):
    """A callback event's run: present once its delivery was accepted or the receiver reported it."""


_RunReportRequired = TypedDict("_RunReportRequired", {"status": Literal["succeeded", "failed"]})
_RunReportOptional = TypedDict("_RunReportOptional", {"output": Optional[Any]}, total=False)


class RunReport(_RunReportRequired, _RunReportOptional):
    """The RunReport schema."""


_ScheduleRequired = TypedDict("_ScheduleRequired", {"frequency": Literal["minutely", "hourly", "daily", "weekly", "monthly", "yearly"]})
_ScheduleOptional = TypedDict("_ScheduleOptional", {"interval": int, "by_day": List[str], "by_month_day": List[int], "by_month": List[int], "by_hour": List[int], "by_minute": List[int], "by_set_pos": List[int], "count": Optional[int], "until": Optional[str], "exdates": List[str]}, total=False)


class Schedule(_ScheduleRequired, _ScheduleOptional):
    """The Schedule schema."""


_SecretRotationRequired = TypedDict("_SecretRotationRequired", {"event_id": str, "hmac_secret": str})
_SecretRotationOptional = TypedDict("_SecretRotationOptional", {"previous_secret_expires_at": Optional[str]}, total=False)


class SecretRotation(_SecretRotationRequired, _SecretRotationOptional):
    """The SecretRotation schema."""


_SentNoticeRequired = TypedDict("_SentNoticeRequired", {"id": str, "at": str, "kind": str, "summary": str, "outcome": Literal["delivered", "failed"], "answer": str, "test": bool})
_SentNoticeOptional = TypedDict("_SentNoticeOptional", {}, total=False)


class SentNotice(_SentNoticeRequired, _SentNoticeOptional):
    """One notice sent to a notification channel."""


_StatsRequired = TypedDict("_StatsRequired", {"since": str, "until": str, "total": Dict[str, Any], "by_action": Dict[str, Dict[str, Any]]})
_StatsOptional = TypedDict("_StatsOptional", {}, total=False)


class Stats(_StatsRequired, _StatsOptional):
    """The Stats schema."""


_StatusRequired = TypedDict("_StatusRequired", {"status": Literal["ok", "degraded", "unavailable"], "version": str, "instance_id": str, "backends": Dict[str, Any]})
_StatusOptional = TypedDict("_StatusOptional", {"started_at": str, "uptime": str, "time": str, "queue": Dict[str, int], "scheduler": Dict[str, Any], "replans": Dict[str, Any]}, total=False)


class Status(_StatusRequired, _StatusOptional):
    """The Status schema."""


_SubscriptionRequired = TypedDict("_SubscriptionRequired", {"id": str, "topic": str, "endpoint_id": str, "filter": Optional[str], "description": str, "tags": List[str], "paused": bool, "version": int, "created_by": str, "created_at": str, "updated_at": str})
_SubscriptionOptional = TypedDict("_SubscriptionOptional", {}, total=False)


class Subscription(_SubscriptionRequired, _SubscriptionOptional):
    """A request for the firings of the topics a name or pattern names, delivered to one endpoint when the filter says so."""


_SubscriptionPageRequired = TypedDict("_SubscriptionPageRequired", {"data": List['Subscription'], "pagination": Dict[str, Any]})
_SubscriptionPageOptional = TypedDict("_SubscriptionPageOptional", {}, total=False)


class SubscriptionPage(_SubscriptionPageRequired, _SubscriptionPageOptional):
    """The SubscriptionPage schema."""


_SubscriptionRequestRequired = TypedDict("_SubscriptionRequestRequired", {})
_SubscriptionRequestOptional = TypedDict("_SubscriptionRequestOptional", {"topic": str, "endpoint_id": str, "filter": Optional[str], "description": Optional[str], "tags": List[str], "paused": bool}, total=False)


class SubscriptionRequest(_SubscriptionRequestRequired, _SubscriptionRequestOptional):
    """The SubscriptionRequest schema."""


_TimelineRequired = TypedDict("_TimelineRequired", {"since": str, "until": str, "step": str, "buckets": List[Dict[str, Any]]})
_TimelineOptional = TypedDict("_TimelineOptional", {}, total=False)


class Timeline(_TimelineRequired, _TimelineOptional):
    """The Timeline schema."""


_TokenRequired = TypedDict("_TokenRequired", {"id": str, "type": str, "sub": str, "access": str, "scope": List[str], "expires_at": str})
_TokenOptional = TypedDict("_TokenOptional", {"token": str, "revoked_at": str, "created_by": str, "created_at": str}, total=False)


class Token(_TokenRequired, _TokenOptional):
    """The Token schema."""


_TokenRequestRequired = TypedDict("_TokenRequestRequired", {"sub": str, "access": Literal["read", "write", "admin", "read_write"], "expires_at": str})
_TokenRequestOptional = TypedDict("_TokenRequestOptional", {"type": Literal["jwt"], "scope": List[str]}, total=False)


class TokenRequest(_TokenRequestRequired, _TokenRequestOptional):
    """The TokenRequest schema."""


_TopicRequired = TypedDict("_TopicRequired", {"name": str, "description": str, "schema": Optional[Any], "version": int, "created_by": str, "created_at": str, "updated_at": str})
_TopicOptional = TypedDict("_TopicOptional", {}, total=False)


class Topic(_TopicRequired, _TopicOptional):
    """An entry of the catalogue of what can fire. Events target a topic by name; subscriptions name it or a pattern of names."""


_TopicPageRequired = TypedDict("_TopicPageRequired", {"data": List['Topic'], "pagination": Dict[str, Any]})
_TopicPageOptional = TypedDict("_TopicPageOptional", {}, total=False)


class TopicPage(_TopicPageRequired, _TopicPageOptional):
    """The TopicPage schema."""


_TopicRequestRequired = TypedDict("_TopicRequestRequired", {})
_TopicRequestOptional = TypedDict("_TopicRequestOptional", {"name": str, "description": str, "schema": Optional[Any]}, total=False)


class TopicRequest(_TopicRequestRequired, _TopicRequestOptional):
    """The TopicRequest schema."""
