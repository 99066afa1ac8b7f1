// Names for the types openapi-typescript generated into openapi.ts.
import type { components, paths } from "./openapi.js";

type S = components["schemas"];
type Query<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;

export type { components, paths };
export type Action = S["Action"];
export type Attempt = S["Attempt"];
/** One page of subscriptions.deliveries: a subscription's attempts, newest first. */
export type AttemptPage = S["AttemptPage"];
export type BackfillRequest = S["BackfillRequest"];
export type BackfillResult = S["BackfillResult"];
export type Calendar = S["Calendar"];
export type CalendarInput = S["CalendarInput"];
/** An event's `concurrency`: the key it shares and the most of its occurrences in flight at once. */
export type Concurrency = S["Concurrency"];
/** A concurrency key's limit, occurrences in flight and waiting, and pause state. */
export type ConcurrencyKey = S["ConcurrencyKey"];
export type ConcurrencyKeyPage = S["ConcurrencyKeyPage"];
export type Endpoint = S["Endpoint"];
export type EndpointInput = S["EndpointInput"];
export type EndpointPatch = S["EndpointPatch"];
export type Event = S["Event"];
export type EventInput = S["EventInput"];
export type EventUpsertInput = S["EventUpsertInput"];
export type EventBatchInput = S["EventBatchInput"];
export type EventBatchResult = S["EventBatchResult"];
/** One event's outcome in events.createMany. */
export type BatchResult = S["EventBatchItemResult"];
export type Exception = S["Exception"];
/** One subscription's delivery of a fan-out occurrence (an occurrence of an event that targets a topic): its
 * `status` (delivered, failed, pending, filtered), `error`, `next_attempt_at` and `attempts` (the document's
 * `Delivery`; `Delivery` is what verifyDelivery gives). */
export type FanoutDelivery = S["Delivery"];
export type FanoutDeliveryPage = S["DeliveryPage"];
/** A fan-out occurrence's `fanout`: its subscriptions and its deliveries counted by status. */
export type FanoutSummary = S["FanoutSummary"];
export type Health = S["Health"];
export type HistoryEntry = S["HistoryEntry"];
export type HistoryPage = S["HistoryPage"];
export type CircuitEntry = S["CircuitEntry"];
export type CircuitHistoryPage = S["CircuitHistoryPage"];
export type SentNotice = S["SentNotice"];
export type NoticePage = S["NoticePage"];
export type NotificationChannel = S["NotificationChannel"];
export type NotificationChannelRequest = S["NotificationChannelRequest"];
export type NotificationTestResult = S["NotificationTestResult"];
export type EndpointTestResult = S["EndpointTestResult"];
export type Occurrence = S["Occurrence"];
export type OccurrencePage = S["OccurrencePage"];
export type PauseRequest = S["PauseRequest"];
export type Preview = S["Preview"];
export type PreviewRequest = S["PreviewRequest"];
export type Ready = S["Ready"];
export type ResumeRequest = S["ResumeRequest"];
/** occurrences.replayDelivery's body: the subscription whose delivery goes again. */
export type ReplayRequest = S["ReplayRequest"];
export type RetryFilter = S["RetryFilter"];
export type RetryResult = S["RetryResult"];
/** The run of a callback event's occurrence (Occurrence.run). */
export type Run = S["Run"];
/** How a run ended: occurrences.complete's body. */
export type RunReport = S["RunReport"];
export type SecretRotation = S["SecretRotation"];
export type Stats = S["Stats"];
export type Status = S["Status"];
export type Timeline = S["Timeline"];
export type PunctualityReport = S["PunctualityReport"];
export type PunctualityCounts = S["PunctualityCounts"];
export type PunctualityGroup = S["PunctualityGroup"];
export type PunctualityPoint = S["PunctualityPoint"];
export type Token = S["Token"];
export type TokenRequest = S["TokenRequest"];
/** A one-time link to the portal: its `url`, shown once, and `expires_at`. */
export type PortalLink = S["PortalLink"];
/** portalLinks.create's body: `tags`, `expires_in`, `return_url`. */
export type PortalLinkRequest = S["PortalLinkRequest"];
/** A redeemed portal link: the portal session's token, its tags and Back link. */
export type PortalSession = S["PortalSession"];
/** An entry of the catalogue of what can fire: its name, description and the JSON Schema (or null) of the metadata
 * of events targeting it. */
export type Topic = S["Topic"];
/** topics.create's body, and topics.update's: the members given change; `schema: null` removes the schema. */
export type TopicRequest = S["TopicRequest"];
export type TopicPage = S["TopicPage"];
/** An endpoint subscribed to a topic or a pattern of topics, with a CEL filter: the document's `Subscription`
 * (named as in the Go SDK, `client.TopicSubscription`: `Subscription` is what `subscribe` listens to on /ws). */
export type TopicSubscription = S["Subscription"];
/** subscriptions.create's body, and subscriptions.update's: the members given change; `filter: null` delivers every
 * firing again, `description: null` clears it. */
export type TopicSubscriptionRequest = S["SubscriptionRequest"];
export type TopicSubscriptionPage = S["SubscriptionPage"];

export type ListEventsParams = Query<"/events", "get">;
export type GetEventParams = Query<"/events/{id}", "get">;
export type ListEventOccurrencesParams = Query<"/events/{id}/occurrences", "get">;
export type PreviewEventParams = Query<"/events/{id}/preview", "get">;
export type EventHistoryParams = Query<"/events/{id}/history", "get">;
export type CircuitHistoryParams = Query<"/endpoints/{id}/circuit-history", "get">;
export type NoticesParams = Query<"/notification-channels/{id}/notices", "get">;
export type ListOccurrencesParams = Query<"/occurrences", "get">;
export type ListOccurrenceDeliveriesParams = Query<"/occurrences/{id}/deliveries", "get">;
export type ListSubscriptionDeliveriesParams = Query<"/subscriptions/{id}/deliveries", "get">;
export type ListCalendarsParams = Query<"/calendars", "get">;
export type ListEndpointsParams = Query<"/endpoints", "get">;
export type ListConcurrencyKeysParams = Query<"/concurrency-keys", "get">;
export type ListTopicsParams = Query<"/topics", "get">;
export type ListSubscriptionsParams = Query<"/subscriptions", "get">;
export type StatsParams = Query<"/stats", "get">;
export type StatsTimelineParams = Query<"/stats/timeline", "get">;
export type PunctualityParams = Query<"/stats/punctuality", "get">;
export type RotateSecretRequest = Body<"/events/{id}/rotate-secret", "post">;
export type SkipRequest = Body<"/occurrences/{id}/skip", "post">;
export type MoveRequest = Body<"/occurrences/{id}/move", "post">;

/** The range of events.backfill: BackfillRequest with `from` and `to` as a
 * Date or a string (RFC 3339, or any form start_time takes, "30 days ago"),
 * and `respect_exceptions` optional (the server's default: true). */
export type BackfillInput = Omit<BackfillRequest, "from" | "to" | "respect_exceptions"> & {
  from: Date | string;
  to: Date | string;
  respect_exceptions?: BackfillRequest["respect_exceptions"];
};

/** One page of a list and the cursor of the next ("" on the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string;
}
