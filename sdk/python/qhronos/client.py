"""The client: one class per resource, named after the API's, in the shape of
the Go SDK (client/*.go). Answers are the generated TypedDicts (plain dicts).

Every method also takes these keyword-only call options (never sent as
fields): idempotency_key, if_match, via, request_timeout (seconds) and cancel
(a threading.Event that stops the call, including a wait between retries).
"""
import threading
from datetime import datetime
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from . import types as t
from ._transport import Answer, Page, Request, Transport, next_cursor, paginate, path_id
from ._transport import _value as _iso
from ._websocket import Connection, subscribe

MAX_BATCH = 1000
"""The most events one POST /events/batch takes; create_many sends more in chunks."""

_OPTIONS = ("idempotency_key", "if_match", "via", "request_timeout", "cancel")


def _split(kw: Dict[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Separates the call options from the fields or parameters."""
    opts = {k: kw.pop(k) for k in _OPTIONS if k in kw}
    if "request_timeout" in opts:
        opts["timeout"] = opts.pop("request_timeout")
    return kw, opts


def _body(given: Optional[Mapping[str, Any]], fields: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    if given is None and not fields:
        return None
    out = dict(given or {})
    out.update(fields)
    return out


class _Resource:
    def __init__(self, transport: Transport):
        self._t = transport

    def _send(self, method: str, path: str, opts: Dict[str, Any], **req: Any) -> Answer:
        return self._t.send(Request(method, path, **req), **opts)

    def _data(self, method: str, path: str, opts: Dict[str, Any], **req: Any) -> Any:
        return self._send(method, path, opts, **req).data

    def _page(self, path: str, params: Dict[str, Any], opts: Dict[str, Any]) -> Page:
        a = self._send("GET", path, opts, query=params)
        return Page(a.data or [], next_cursor(a.headers.get("Link")))


class Events(_Resource):
    """/events"""

    def create(self, event: Optional[t.EventInput] = None, **fields: Any) -> t.Event:
        """Creates an event (POST /events); a retry never creates twice."""
        fields, opts = _split(fields)
        return self._data("POST", "/events", opts, body=_body(event, fields), ensure_key=True)

    def create_many(self, events: List[t.EventInput], **kw: Any) -> List[t.EventBatchItemResult]:
        """Creates events with POST /events/batch, MAX_BATCH at a time, each
        validated and written as create would; one result per event in input
        order (status 201 with event, or the status, error and field a single
        create would have answered; index is the event's position in events).
        A refused event is a result, not an exception. Every chunk is
        idempotent: with idempotency_key, chunk n of more than MAX_BATCH
        events goes as "<key>/<n>"; without, each chunk gets a fresh key."""
        _, opts = _split(kw)
        key = opts.get("idempotency_key")
        out: List[t.EventBatchItemResult] = []
        for n, start in enumerate(range(0, len(events), MAX_BATCH)):
            chunk = list(events[start:start + MAX_BATCH])
            if key and len(events) > MAX_BATCH:
                opts["idempotency_key"] = f"{key}/{n}"
            answer = self._data("POST", "/events/batch", opts, body={"events": chunk}, ensure_key=True) or {}
            results = answer.get("results") or []
            if len(results) != len(chunk):
                raise ValueError(f"POST /events/batch: {len(results)} results for {len(chunk)} events")
            for r in results:
                out.append({**r, "index": r["index"] + start})
        return out

    def list(self, **params: Any) -> "Page[t.Event]":
        """One page of events, newest first (GET /events): tags, tags_all,
        status, topic (the events that target it), from_, to, limit,
        cursor, ..."""
        params, opts = _split(params)
        return self._page("/events", params, opts)

    def all(self, **params: Any) -> Iterator[t.Event]:
        """Every event matching params, page after page."""
        return paginate(lambda cursor: self.list(**{**params, "cursor": cursor}))

    def get(self, id: str, include_deleted: Optional[bool] = None, **kw: Any) -> t.Event:
        """One event (GET /events/{id}); include_deleted also finds a deleted one."""
        _, opts = _split(kw)
        return self._data("GET", f"/events/{path_id(id)}", opts, query={"include_deleted": include_deleted})

    def get_with_etag(self, id: str, **kw: Any) -> Tuple[t.Event, str]:
        """One event and its ETag, for if_match."""
        _, opts = _split(kw)
        a = self._send("GET", f"/events/{path_id(id)}", opts)
        return a.data, a.headers.get("ETag") or ""

    def update(self, id: str, event: Optional[t.EventInput] = None, **fields: Any) -> t.Event:
        """Changes the fields given (PUT /events/{id})."""
        fields, opts = _split(fields)
        return self._data("PUT", f"/events/{path_id(id)}", opts, body=_body(event, fields) or {})

    def delete(self, id: str, **kw: Any) -> None:
        """Soft-deletes an event (DELETE /events/{id}); history is kept."""
        _, opts = _split(kw)
        self._send("DELETE", f"/events/{path_id(id)}", opts)

    def upsert(self, key: str, event: Optional[t.EventUpsertInput] = None, **fields: Any) -> Tuple[t.Event, bool]:
        """Creates or replaces the event with this key (PUT /events/by-key/{key});
        the bool is True when it was created (201), False when replaced (200)."""
        fields, opts = _split(fields)
        a = self._send("PUT", f"/events/by-key/{path_id(key)}", opts, body=_body(event, fields) or {})
        return a.data, a.status == 201

    def delete_by_key(self, key: str, **kw: Any) -> None:
        """Deletes the event with this key (DELETE /events/by-key/{key})."""
        _, opts = _split(kw)
        self._send("DELETE", f"/events/by-key/{path_id(key)}", opts)

    def pause(self, id: str, **fields: Any) -> t.Event:
        """Pauses an event; until, reason, catch_up optional (POST /events/{id}/pause)."""
        fields, opts = _split(fields)
        return self._data("POST", f"/events/{path_id(id)}/pause", opts, body=_body(None, fields), idempotent=True)

    def resume(self, id: str, **fields: Any) -> t.Event:
        """Resumes a paused event; catch_up optional (POST /events/{id}/resume)."""
        fields, opts = _split(fields)
        return self._data("POST", f"/events/{path_id(id)}/resume", opts, body=_body(None, fields), idempotent=True)

    def trigger(self, id: str, **kw: Any) -> t.Occurrence:
        """Fires one manual occurrence now (POST /events/{id}/trigger); a retry never fires twice."""
        _, opts = _split(kw)
        return self._data("POST", f"/events/{path_id(id)}/trigger", opts, ensure_key=True)

    def backfill(self, id: str, from_: Union[datetime, str], to: Union[datetime, str],
                 respect_exceptions: bool = True, **kw: Any) -> t.BackfillResult:
        """Fires the instants of the event's pattern in [from_, to], both
        included, that have no occurrence yet: each gets one, due now, with
        reason "backfill" (POST /events/{id}/backfill). from_ and to are
        datetimes (naive ones are UTC) or strings (RFC 3339, or any form
        start_time takes: "30 days ago"); the range may start before the
        event's start_time, to may not be in the future, at most 10,000
        instants. respect_exceptions=False ignores the event's exceptions and
        calendars. A one-time or paused event raises ConflictError. A repeat
        creates nothing more, so it is retried like a PUT (a retry after a
        lost answer counts those instants as existing)."""
        _, opts = _split(kw)
        body = {"from": from_, "to": to, "respect_exceptions": respect_exceptions}
        return self._data("POST", f"/events/{path_id(id)}/backfill", opts, body=body, idempotent=True)

    def rotate_secret(self, id: str, grace: Optional[str] = None, **kw: Any) -> t.SecretRotation:
        """Issues a new signing secret, shown only here; the previous one keeps
        signing for grace, e.g. "24h" (POST /events/{id}/rotate-secret)."""
        _, opts = _split(kw)
        body = {"grace": grace} if grace else {}
        return self._data("POST", f"/events/{path_id(id)}/rotate-secret", opts, body=body)

    def occurrences(self, id: str, **params: Any) -> "Page[t.Occurrence]":
        """One page of an event's occurrences (GET /events/{id}/occurrences)."""
        params, opts = _split(params)
        return self._page(f"/events/{path_id(id)}/occurrences", params, opts)

    def all_occurrences(self, id: str, **params: Any) -> Iterator[t.Occurrence]:
        """Every occurrence of an event matching params."""
        return paginate(lambda cursor: self.occurrences(id, **{**params, "cursor": cursor}))

    def preview(self, id: str, **params: Any) -> t.Preview:
        """The next instants of an event: count, after (GET /events/{id}/preview)."""
        params, opts = _split(params)
        return self._data("GET", f"/events/{path_id(id)}/preview", opts, query=params)

    def history(self, id: str, **params: Any) -> "Page[t.HistoryEntry]":
        """One page of an event's history, oldest first (GET /events/{id}/history)."""
        params, opts = _split(params)
        out = self._data("GET", f"/events/{path_id(id)}/history", opts, query=params)
        return Page(out.get("data") or [], (out.get("pagination") or {}).get("next_cursor") or "")

    def all_history(self, id: str, **params: Any) -> Iterator[t.HistoryEntry]:
        """An event's whole history, oldest first."""
        return paginate(lambda cursor: self.history(id, **{**params, "cursor": cursor}))

    def exceptions(self, id: str, **kw: Any) -> List[t.Exception]:
        """An event's exceptions (GET /events/{id}/exceptions)."""
        _, opts = _split(kw)
        return self._data("GET", f"/events/{path_id(id)}/exceptions", opts).get("data") or []

    def add_exception(self, id: str, exception: Optional[t.Exception] = None, **fields: Any) -> t.Exception:
        """Skips or moves one planned instant: at, action, to, reason (POST /events/{id}/exceptions)."""
        fields, opts = _split(fields)
        return self._data("POST", f"/events/{path_id(id)}/exceptions", opts, body=_body(exception, fields))

    def delete_exception(self, id: str, at: Union[datetime, str], **kw: Any) -> None:
        """Removes the exception at an instant (DELETE /events/{id}/exceptions/{at})."""
        _, opts = _split(kw)
        when = at if isinstance(at, str) else _iso(at)
        self._send("DELETE", f"/events/{path_id(id)}/exceptions/{path_id(when)}", opts)


class Occurrences(_Resource):
    """/occurrences"""

    def list(self, **params: Any) -> t.OccurrencePage:
        """One page in the original envelope, with its total (GET /occurrences)."""
        params, opts = _split(params)
        return self._data("GET", "/occurrences", opts, query=params)

    def all(self, **params: Any) -> Iterator[t.Occurrence]:
        """Every occurrence matching params, following the cursor."""
        params.pop("page", None)  # a cursor and a page cannot be combined

        def fetch(cursor: Optional[str]) -> Page:
            p = self.list(**{**params, "cursor": cursor})
            return Page(p.get("data") or [], (p.get("pagination") or {}).get("next_cursor") or "")

        return paginate(fetch)

    def get(self, id: str, **kw: Any) -> t.Occurrence:
        """One occurrence (GET /occurrences/{id})."""
        _, opts = _split(kw)
        return self._data("GET", f"/occurrences/{path_id(id)}", opts)

    def attempts(self, id: str, **kw: Any) -> List[t.Attempt]:
        """The attempts of an occurrence, oldest first (GET /occurrences/{id}/attempts)."""
        _, opts = _split(kw)
        return self._data("GET", f"/occurrences/{path_id(id)}/attempts", opts) or []

    def replay(self, id: str, **kw: Any) -> t.Occurrence:
        """Delivers one occurrence again, same delivery id (POST
        /occurrences/{id}/retry); a fan-out occurrence re-sends its failed
        deliveries (replay_delivery: one subscription's)."""
        _, opts = _split(kw)
        return self._data("POST", f"/occurrences/{path_id(id)}/retry", opts)

    def replay_delivery(self, id: str, subscription_id: str, **kw: Any) -> t.Occurrence:
        """Delivers one subscription's delivery of a finished fan-out
        occurrence again, failed or delivered, and no other (POST
        /occurrences/{id}/retry with subscription_id). The subscription's
        owner may ask for it too; a subscription the occurrence filtered out,
        or one added after it fired, raises BadRequestError naming
        subscription_id, an occurrence still under way ConflictError."""
        _, opts = _split(kw)
        return self._data("POST", f"/occurrences/{path_id(id)}/retry", opts, body={"subscription_id": subscription_id})

    def deliveries(self, id: str, **params: Any) -> "Page[t.Delivery]":
        """One page of a fan-out occurrence's deliveries, one per subscription
        (filtered ones included) in subscription id order, each with its
        attempts: limit, cursor (GET /occurrences/{id}/deliveries). An
        occurrence whose event runs an action has none."""
        params, opts = _split(params)
        out = self._data("GET", f"/occurrences/{path_id(id)}/deliveries", opts, query=params)
        return Page(out.get("data") or [], (out.get("pagination") or {}).get("next_cursor") or "")

    def all_deliveries(self, id: str, **params: Any) -> Iterator[t.Delivery]:
        """Every delivery of a fan-out occurrence, page after page."""
        return paginate(lambda cursor: self.deliveries(id, **{**params, "cursor": cursor}))

    def replay_matching(self, filter: Optional[t.RetryFilter] = None, **fields: Any) -> t.RetryResult:
        """Re-queues every terminal occurrence matching the filter (POST /occurrences/retry)."""
        fields, opts = _split(fields)
        return self._data("POST", "/occurrences/retry", opts, body=_body(filter, fields) or {})

    def skip(self, id: str, reason: Optional[str] = None, **kw: Any) -> t.Occurrence:
        """Skips one occurrence still ahead (POST /occurrences/{id}/skip)."""
        _, opts = _split(kw)
        body = {"reason": reason} if reason else None
        return self._data("POST", f"/occurrences/{path_id(id)}/skip", opts, body=body)

    def unskip(self, id: str, **kw: Any) -> t.Occurrence:
        """Undoes a skip while the instant is still ahead (POST /occurrences/{id}/unskip)."""
        _, opts = _split(kw)
        return self._data("POST", f"/occurrences/{path_id(id)}/unskip", opts)

    def move(self, id: str, to: Union[datetime, str], reason: Optional[str] = None, **kw: Any) -> t.Occurrence:
        """Moves one occurrence still ahead, keeping its id (POST /occurrences/{id}/move)."""
        _, opts = _split(kw)
        body: Dict[str, Any] = {"to": to}
        if reason:
            body["reason"] = reason
        return self._data("POST", f"/occurrences/{path_id(id)}/move", opts, body=body)

    def complete(self, id: str, status: str, output: Any = None, **kw: Any) -> t.Occurrence:
        """Completes the run of a callback event's occurrence: status
        "succeeded" (the occurrence ends completed) or "failed", and any JSON
        output up to 16 KB (POST /occurrences/{id}/complete). Takes a token
        that may write the event, or the delivery's run token as the client's
        token. The same report again answers the same, so it is retried like a
        PUT; a different one after the end, or any after a timeout, raises
        ConflictError."""
        _, opts = _split(kw)
        body: Dict[str, Any] = {"status": status}
        if output is not None:
            body["output"] = output
        return self._data("POST", f"/occurrences/{path_id(id)}/complete", opts, body=body, idempotent=True)

    def heartbeat(self, id: str, **kw: Any) -> t.Occurrence:
        """Says the run of a callback event's occurrence is alive: its
        deadline moves to now + the event's max_runtime (POST
        /occurrences/{id}/heartbeat). Same tokens as complete; a run no longer
        under way raises ConflictError."""
        _, opts = _split(kw)
        return self._data("POST", f"/occurrences/{path_id(id)}/heartbeat", opts, idempotent=True)


class ConcurrencyKeys(_Resource):
    """/concurrency-keys: the keys events share with concurrency={"key": ...,
    "limit": ...}. At most limit occurrences of all the events naming a key
    are in flight at once, installation-wide; the others wait (pending, reason
    "concurrency_wait"), oldest instant first."""

    def list(self, **params: Any) -> "Page[t.ConcurrencyKey]":
        """One page of the keys the token can see, in key order: limit, cursor (GET /concurrency-keys)."""
        params, opts = _split(params)
        out = self._data("GET", "/concurrency-keys", opts, query=params)
        return Page(out.get("data") or [], (out.get("pagination") or {}).get("next_cursor") or "")

    def all(self, **params: Any) -> Iterator[t.ConcurrencyKey]:
        """Every key the token can see, page after page."""
        return paginate(lambda cursor: self.list(**{**params, "cursor": cursor}))

    def get(self, key: str, **kw: Any) -> t.ConcurrencyKey:
        """One key: its limit, occurrences in flight and waiting, and whether it
        is paused (GET /concurrency-keys/{key}); NotFoundError when no event
        the token can read names it."""
        _, opts = _split(kw)
        return self._data("GET", f"/concurrency-keys/{path_id(key)}", opts)

    def pause(self, key: str, **kw: Any) -> t.ConcurrencyKey:
        """Holds back the key's occurrences: none takes a slot until resume;
        the runs in flight go on (POST /concurrency-keys/{key}/pause)."""
        _, opts = _split(kw)
        return self._data("POST", f"/concurrency-keys/{path_id(key)}/pause", opts, idempotent=True)

    def resume(self, key: str, **kw: Any) -> t.ConcurrencyKey:
        """Lets a paused key's oldest waiting occurrences go, as many as it has
        room for (POST /concurrency-keys/{key}/resume)."""
        _, opts = _split(kw)
        return self._data("POST", f"/concurrency-keys/{path_id(key)}/resume", opts, idempotent=True)


class Schedules(_Resource):
    """/schedules"""

    def preview(self, request: Optional[t.PreviewRequest] = None, **fields: Any) -> t.Preview:
        """The next instants of a rule, creating nothing (POST /schedules/preview)."""
        fields, opts = _split(fields)
        return self._data("POST", "/schedules/preview", opts, body=_body(request, fields) or {}, idempotent=True)


class Calendars(_Resource):
    """/calendars: exclusion calendars."""

    def create(self, calendar: Optional[t.CalendarInput] = None, **fields: Any) -> t.Calendar:
        """Stores a calendar (POST /calendars)."""
        fields, opts = _split(fields)
        return self._data("POST", "/calendars", opts, body=_body(calendar, fields))

    def list(self, **params: Any) -> "Page[t.Calendar]":
        """One page of calendars (GET /calendars)."""
        params, opts = _split(params)
        return self._page("/calendars", params, opts)

    def all(self, **params: Any) -> Iterator[t.Calendar]:
        """Every calendar matching params."""
        return paginate(lambda cursor: self.list(**{**params, "cursor": cursor}))

    def get(self, id: str, **kw: Any) -> t.Calendar:
        """One calendar (GET /calendars/{id})."""
        _, opts = _split(kw)
        return self._data("GET", f"/calendars/{path_id(id)}", opts)

    def update(self, id: str, calendar: Optional[t.CalendarInput] = None, **fields: Any) -> t.Calendar:
        """Replaces a calendar (PUT /calendars/{id})."""
        fields, opts = _split(fields)
        return self._data("PUT", f"/calendars/{path_id(id)}", opts, body=_body(calendar, fields))

    def delete(self, id: str, **kw: Any) -> None:
        """Removes a calendar no event uses (DELETE /calendars/{id}; 409 while in use)."""
        _, opts = _split(kw)
        self._send("DELETE", f"/calendars/{path_id(id)}", opts)


class Endpoints(_Resource):
    """/endpoints: shared delivery targets."""

    def create(self, endpoint: Optional[t.EndpointInput] = None, **fields: Any) -> t.Endpoint:
        """Stores an endpoint (POST /endpoints); the answer's secret is shown only here."""
        fields, opts = _split(fields)
        return self._data("POST", "/endpoints", opts, body=_body(endpoint, fields))

    def list(self, **params: Any) -> "Page[t.Endpoint]":
        """One page of endpoints (GET /endpoints)."""
        params, opts = _split(params)
        return self._page("/endpoints", params, opts)

    def all(self, **params: Any) -> Iterator[t.Endpoint]:
        """Every endpoint matching params."""
        return paginate(lambda cursor: self.list(**{**params, "cursor": cursor}))

    def get(self, id: str, **kw: Any) -> t.Endpoint:
        """One endpoint with its state and health (GET /endpoints/{id})."""
        _, opts = _split(kw)
        return self._data("GET", f"/endpoints/{path_id(id)}", opts)

    def update(self, id: str, patch: Optional[t.EndpointPatch] = None, **fields: Any) -> t.Endpoint:
        """Changes the members given; None clears an optional one (PATCH /endpoints/{id})."""
        fields, opts = _split(fields)
        return self._data("PATCH", f"/endpoints/{path_id(id)}", opts, body=_body(patch, fields) or {})

    def delete(self, id: str, **kw: Any) -> None:
        """Removes an endpoint no event names (DELETE /endpoints/{id})."""
        _, opts = _split(kw)
        self._send("DELETE", f"/endpoints/{path_id(id)}", opts)

    def enable(self, id: str, **kw: Any) -> t.Endpoint:
        """Makes an endpoint healthy again (POST /endpoints/{id}/enable)."""
        _, opts = _split(kw)
        return self._data("POST", f"/endpoints/{path_id(id)}/enable", opts, idempotent=True)

    def disable(self, id: str, **kw: Any) -> t.Endpoint:
        """Stops deliveries to an endpoint (POST /endpoints/{id}/disable)."""
        _, opts = _split(kw)
        return self._data("POST", f"/endpoints/{path_id(id)}/disable", opts, idempotent=True)

    def rotate_secret(self, id: str, grace: Optional[str] = None, **kw: Any) -> t.Endpoint:
        """Issues a new signing secret; the old one signs until grace ends (POST /endpoints/{id}/rotate-secret)."""
        _, opts = _split(kw)
        body = {"grace": grace} if grace else {}
        return self._data("POST", f"/endpoints/{path_id(id)}/rotate-secret", opts, body=body)

    def test(self, id: str, **kw: Any) -> t.EndpointTestResult:
        """Sends one signed test webhook now and returns what the receiver answered; not logged, not counted by
        the circuit (POST /endpoints/{id}/test)."""
        _, opts = _split(kw)
        return self._data("POST", f"/endpoints/{path_id(id)}/test", opts)

    def circuit_history(self, id: str, **params: Any) -> "Page[t.CircuitEntry]":
        """One page of an endpoint's circuit transitions, newest first (GET /endpoints/{id}/circuit-history)."""
        params, opts = _split(params)
        out = self._data("GET", f"/endpoints/{path_id(id)}/circuit-history", opts, query=params)
        return Page(out.get("data") or [], (out.get("pagination") or {}).get("next_cursor") or "")

    def all_circuit_history(self, id: str, **params: Any) -> Iterator[t.CircuitEntry]:
        """An endpoint's kept circuit history, newest first."""
        return paginate(lambda cursor: self.circuit_history(id, **{**params, "cursor": cursor}))


class Topics(_Resource):
    """/topics: the catalogue of what can fire. Every token reads it; only
    admins change it."""

    def create(self, topic: Optional[t.TopicRequest] = None, **fields: Any) -> t.Topic:
        """Adds a topic (POST /topics, admin): name (dot-separated segments of
        a-z 0-9 _ -, fixed once created), description, schema (a JSON Schema
        of the metadata of events targeting it); a taken name raises
        ConflictError."""
        fields, opts = _split(fields)
        return self._data("POST", "/topics", opts, body=_body(topic, fields))

    def list(self, **params: Any) -> "Page[t.Topic]":
        """One page of the catalogue, in name order: limit, cursor (GET /topics)."""
        params, opts = _split(params)
        out = self._data("GET", "/topics", opts, query=params)
        return Page(out.get("data") or [], (out.get("pagination") or {}).get("next_cursor") or "")

    def all(self, **params: Any) -> Iterator[t.Topic]:
        """The whole catalogue, in name order, page after page."""
        return paginate(lambda cursor: self.list(**{**params, "cursor": cursor}))

    def get(self, name: str, **kw: Any) -> t.Topic:
        """One topic (GET /topics/{name})."""
        _, opts = _split(kw)
        return self._data("GET", f"/topics/{path_id(name)}", opts)

    def update(self, name: str, topic: Optional[t.TopicRequest] = None, **fields: Any) -> t.Topic:
        """Changes the members given, description or schema; schema=None
        removes the schema (PATCH /topics/{name}, admin; if_match makes it
        conditional)."""
        fields, opts = _split(fields)
        return self._data("PATCH", f"/topics/{path_id(name)}", opts, body=_body(topic, fields) or {})

    def delete(self, name: str, **kw: Any) -> None:
        """Removes a topic (DELETE /topics/{name}, admin); ConflictError while
        a subscription names it."""
        _, opts = _split(kw)
        self._send("DELETE", f"/topics/{path_id(name)}", opts)


class Subscriptions(_Resource):
    """/subscriptions: endpoints subscribed to a topic, or to a pattern of
    topics (* segments), with a CEL filter; scoped by tags like endpoints."""

    def create(self, subscription: Optional[t.SubscriptionRequest] = None, **fields: Any) -> t.Subscription:
        """Subscribes an endpoint the token can read (POST /subscriptions):
        topic (a topic that exists, or a pattern such as "billing.*"),
        endpoint_id, filter, description, tags, paused."""
        fields, opts = _split(fields)
        return self._data("POST", "/subscriptions", opts, body=_body(subscription, fields))

    def list(self, **params: Any) -> "Page[t.Subscription]":
        """One page of the subscriptions the token can read, newest first:
        topic (the name or pattern as written), endpoint_id, paused, tags,
        tags_all, limit, cursor (GET /subscriptions)."""
        params, opts = _split(params)
        out = self._data("GET", "/subscriptions", opts, query=params)
        return Page(out.get("data") or [], (out.get("pagination") or {}).get("next_cursor") or "")

    def all(self, **params: Any) -> Iterator[t.Subscription]:
        """Every subscription matching params, page after page."""
        return paginate(lambda cursor: self.list(**{**params, "cursor": cursor}))

    def get(self, id: str, **kw: Any) -> t.Subscription:
        """One subscription (GET /subscriptions/{id})."""
        _, opts = _split(kw)
        return self._data("GET", f"/subscriptions/{path_id(id)}", opts)

    def update(self, id: str, subscription: Optional[t.SubscriptionRequest] = None, **fields: Any) -> t.Subscription:
        """Changes the members given; filter=None delivers every firing
        again, description=None clears it (PATCH /subscriptions/{id};
        if_match makes it conditional)."""
        fields, opts = _split(fields)
        return self._data("PATCH", f"/subscriptions/{path_id(id)}", opts, body=_body(subscription, fields) or {})

    def delete(self, id: str, **kw: Any) -> None:
        """Removes a subscription (DELETE /subscriptions/{id})."""
        _, opts = _split(kw)
        self._send("DELETE", f"/subscriptions/{path_id(id)}", opts)

    def pause(self, id: str, **kw: Any) -> t.Subscription:
        """Stops deliveries to the subscription until resume (a PATCH of
        paused=True; safe to repeat)."""
        _, opts = _split(kw)
        return self._data("PATCH", f"/subscriptions/{path_id(id)}", opts, body={"paused": True}, idempotent=True)

    def resume(self, id: str, **kw: Any) -> t.Subscription:
        """Delivers the subscription's firings again (a PATCH of
        paused=False; safe to repeat)."""
        _, opts = _split(kw)
        return self._data("PATCH", f"/subscriptions/{path_id(id)}", opts, body={"paused": False}, idempotent=True)

    def deliveries(self, id: str, **params: Any) -> "Page[t.Attempt]":
        """One page of the attempts made to deliver the subscription's
        firings, newest first, across occurrences, each naming its
        occurrence_id and subscription_id: limit, cursor (GET
        /subscriptions/{id}/deliveries)."""
        params, opts = _split(params)
        out = self._data("GET", f"/subscriptions/{path_id(id)}/deliveries", opts, query=params)
        return Page(out.get("data") or [], (out.get("pagination") or {}).get("next_cursor") or "")

    def all_deliveries(self, id: str, **params: Any) -> Iterator[t.Attempt]:
        """Every attempt made for the subscription, newest first, page after
        page."""
        return paginate(lambda cursor: self.deliveries(id, **{**params, "cursor": cursor}))


class Tokens(_Resource):
    """/tokens (admin)"""

    def create(self, request: Optional[t.TokenRequest] = None, **fields: Any) -> t.Token:
        """Mints a JWT, in this answer only (POST /tokens)."""
        fields, opts = _split(fields)
        return self._data("POST", "/tokens", opts, body=_body(request, fields))

    def list(self, **kw: Any) -> List[t.Token]:
        """Lists tokens, never the JWTs (GET /tokens)."""
        _, opts = _split(kw)
        return self._data("GET", "/tokens", opts) or []

    def revoke(self, id: str, **kw: Any) -> None:
        """Revokes a token (DELETE /tokens/{id})."""
        _, opts = _split(kw)
        self._send("DELETE", f"/tokens/{path_id(id)}", opts)


class PortalLinks(_Resource):
    """/portal-links: one-time links to the portal, the console reduced to
    one customer's tags."""

    def create(self, link: Optional[t.PortalLinkRequest] = None, **fields: Any) -> t.PortalLink:
        """Makes a portal link (POST /portal-links): tags (required, each inside
        the token's scope), expires_in ("1h" by default, at most "24h") and
        return_url (the portal's Back link). Open the answer's url once, before
        its expires_at."""
        fields, opts = _split(fields)
        return self._data("POST", "/portal-links", opts, body=_body(link, fields))

    def redeem(self, code: str, **kw: Any) -> t.PortalSession:
        """Uses a link's code, once (POST /portal-links/redeem; no token
        needed): the portal session's token, limited to the link's tags; what
        the console does when the link is opened. A used, expired or unknown
        code raises NotFoundError."""
        _, opts = _split(kw)
        return self._data("POST", "/portal-links/redeem", opts, body={"code": code})


class NotificationChannels(_Resource):
    """/notification-channels (admin)"""

    def create(self, channel: Optional[t.NotificationChannelRequest] = None, **fields: Any) -> t.NotificationChannel:
        """Adds a channel (POST /notification-channels)."""
        fields, opts = _split(fields)
        return self._data("POST", "/notification-channels", opts, body=_body(channel, fields))

    def list(self, **kw: Any) -> List[t.NotificationChannel]:
        """Lists the channels (GET /notification-channels)."""
        _, opts = _split(kw)
        return self._data("GET", "/notification-channels", opts) or []

    def get(self, id: str, **kw: Any) -> t.NotificationChannel:
        """One channel (GET /notification-channels/{id})."""
        _, opts = _split(kw)
        return self._data("GET", f"/notification-channels/{path_id(id)}", opts)

    def update(self, id: str, channel: Optional[t.NotificationChannelRequest] = None, **fields: Any) -> t.NotificationChannel:
        """Changes the members given (PATCH /notification-channels/{id})."""
        fields, opts = _split(fields)
        return self._data("PATCH", f"/notification-channels/{path_id(id)}", opts, body=_body(channel, fields) or {})

    def delete(self, id: str, **kw: Any) -> None:
        """Removes a channel (DELETE /notification-channels/{id})."""
        _, opts = _split(kw)
        self._send("DELETE", f"/notification-channels/{path_id(id)}", opts)

    def test(self, id: str, **kw: Any) -> t.NotificationTestResult:
        """Sends a test notice now (POST /notification-channels/{id}/test)."""
        _, opts = _split(kw)
        return self._data("POST", f"/notification-channels/{path_id(id)}/test", opts)

    def notices(self, id: str, **params: Any) -> "Page[t.SentNotice]":
        """One page of the notices sent to a channel, newest first (GET /notification-channels/{id}/notices)."""
        params, opts = _split(params)
        out = self._data("GET", f"/notification-channels/{path_id(id)}/notices", opts, query=params)
        return Page(out.get("data") or [], (out.get("pagination") or {}).get("next_cursor") or "")


class Client(_Resource):
    """A client of one Qhronos server: qhronos.Client(base_url, token=...).

    retries: how many times a failed idempotent call is retried (default 2;
    0: never); every call is retried on 429 after Retry-After. backoff: the
    first retry delay in seconds (doubling, with jitter); max_wait: the
    longest wait, a Retry-After included (a longer one is raised instead);
    timeout: seconds per request; via: names the tool making every call.
    """

    def __init__(self, base_url: str, token: Optional[str] = None, *, retries: int = 2, backoff: float = 0.25,
                 max_wait: float = 30.0, timeout: float = 30.0, via: Optional[str] = None):
        super().__init__(Transport(base_url, token, retries, backoff, max_wait, timeout, via))
        self.events = Events(self._t)
        self.occurrences = Occurrences(self._t)
        self.schedules = Schedules(self._t)
        self.calendars = Calendars(self._t)
        self.endpoints = Endpoints(self._t)
        self.tokens = Tokens(self._t)
        self.notification_channels = NotificationChannels(self._t)
        self.concurrency_keys = ConcurrencyKeys(self._t)
        self.topics = Topics(self._t)
        self.subscriptions = Subscriptions(self._t)
        self.portal_links = PortalLinks(self._t)

    @property
    def base_url(self) -> str:
        return self._t.base_url

    def health(self, **kw: Any) -> t.Health:
        """Whether the process is alive (GET /health)."""
        return self._data("GET", "/health", _split(kw)[1])

    def healthz(self, **kw: Any) -> t.Health:
        """The same as health, at its alias (GET /healthz)."""
        return self._data("GET", "/healthz", _split(kw)[1])

    def ready(self, **kw: Any) -> t.Ready:
        """Whether the database (and Redis) answer (GET /ready); a server that
        is not ready raises UnavailableError whose data is the same body."""
        return self._data("GET", "/ready", _split(kw)[1])

    def status(self, **kw: Any) -> t.Status:
        """The instance's state, without secrets (GET /status)."""
        return self._data("GET", "/status", _split(kw)[1])

    def stats(self, **params: Any) -> t.Stats:
        """Counts, durations and lateness over a window (GET /stats)."""
        params, opts = _split(params)
        return self._data("GET", "/stats", opts, query=params)

    def stats_timeline(self, **params: Any) -> t.Timeline:
        """Attempts per time bucket (GET /stats/timeline)."""
        params, opts = _split(params)
        return self._data("GET", "/stats/timeline", opts, query=params)

    def punctuality(self, **params: Any) -> t.PunctualityReport:
        """How the instants of a window went, per event, endpoint or tag
        (GET /stats/punctuality): due, on time or late against a tolerance,
        missed, skipped, failed, lateness percentiles and success ratio.
        ``tag`` may be a list."""
        params, opts = _split(params)
        return self._data("GET", "/stats/punctuality", opts, query=params)

    def openapi(self, **kw: Any) -> Dict[str, Any]:
        """The server's OpenAPI document (GET /openapi.json)."""
        return self._data("GET", "/openapi.json", _split(kw)[1])

    def metrics(self, **kw: Any) -> str:
        """The Prometheus text exposition (GET /metrics)."""
        return self._data("GET", "/metrics", _split(kw)[1], text=True)

    def subscribe(self, client_name: Optional[str] = None, tags: Optional[List[str]] = None,
                  timeout: float = 30.0) -> Connection:
        """Connects to /ws with the client's token and subscribes as a
        client-hook (client_name) or a tag-listener (tags) (GET /ws)."""
        return subscribe(self._t.base_url, self._t.token, client_name, tags, timeout)

    def send(self, method: str, path: str, *, query: Optional[Mapping[str, Any]] = None, body: Any = None,
             cancel: Optional[threading.Event] = None) -> Answer:
        """The raw request, for routes newer than this client."""
        return self._t.send(Request(method, path, query=query, body=body), cancel=cancel)
