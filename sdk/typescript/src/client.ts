// The hand-written layer over the generated types: one class per resource,
// named after the API's, in the shape of the Go SDK (client/*.go).
import { type Answer, type CallOptions, type ClientOptions, type Request, Transport, nextCursor, pathID } from "./transport.js";
import type * as T from "./types.js";
import { type Connection, type SubscribeOptions, type Subscription, subscribe } from "./websocket.js";

/** list reads one page of a route answering an array with a Link cursor. */
async function listPage<I>(t: Transport, path: string, query: object | undefined, opts?: CallOptions): Promise<T.Page<I>> {
  const a = await t.send<I[]>({ method: "GET", path, query }, opts);
  return { items: a.data ?? [], nextCursor: nextCursor(a.headers.get("Link")) };
}

/** paginate walks pages from fetchPage until the last one. */
async function* paginate<I>(fetchPage: (cursor: string | undefined) => Promise<T.Page<I>>): AsyncGenerator<I, void, undefined> {
  let cursor: string | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* page.items;
    if (!page.nextCursor || page.nextCursor === cursor) return;
    cursor = page.nextCursor;
  }
}

const data = async <D>(p: Promise<Answer<D>>) => (await p).data;
const none = async (p: Promise<Answer<unknown>>) => {
  await p;
};

/** The most events one POST /events/batch takes; createMany sends more in chunks. */
export const MAX_BATCH = 1000;

/** /events */
export class Events {
  constructor(private readonly t: Transport) {}

  /** Creates an event (POST /events); a retry never creates twice. */
  create(event: T.EventInput, opts?: CallOptions): Promise<T.Event> {
    return data(this.t.send({ method: "POST", path: "/events", body: event, ensureKey: true }, opts));
  }
  /**
   * Creates events with POST /events/batch, MAX_BATCH at a time, each
   * validated and written as `create` would; one result per event in input
   * order (`status` 201 with `event`, or the status, `error` and `field` a
   * single create would have answered; `index` is the event's position in
   * `events`). A refused event is a result, not an exception. Every chunk is
   * idempotent: with `idempotencyKey`, chunk n of more than MAX_BATCH events
   * goes as `${key}/${n}`; without, each chunk gets a fresh key.
   */
  async createMany(events: T.EventInput[], opts?: CallOptions): Promise<T.BatchResult[]> {
    const out: T.BatchResult[] = [];
    for (let start = 0, n = 0; start < events.length; start += MAX_BATCH, n++) {
      const chunk = events.slice(start, start + MAX_BATCH);
      const key = opts?.idempotencyKey && events.length > MAX_BATCH ? `${opts.idempotencyKey}/${n}` : opts?.idempotencyKey;
      const body: T.EventBatchInput = { events: chunk };
      const a = await this.t.send<T.EventBatchResult>(
        { method: "POST", path: "/events/batch", body, ensureKey: true },
        { ...opts, idempotencyKey: key },
      );
      const results = a.data?.results ?? [];
      if (results.length !== chunk.length) {
        throw new Error(`POST /events/batch: ${results.length} results for ${chunk.length} events`);
      }
      for (const r of results) out.push({ ...r, index: r.index + start });
    }
    return out;
  }
  /** One page of events, newest first (GET /events). */
  list(params?: T.ListEventsParams, opts?: CallOptions): Promise<T.Page<T.Event>> {
    return listPage(this.t, "/events", params, opts);
  }
  /** Every event matching params, page after page. */
  all(params: T.ListEventsParams = {}, opts?: CallOptions): AsyncGenerator<T.Event, void, undefined> {
    return paginate((cursor) => this.list({ ...params, cursor }, opts));
  }
  /** One event (GET /events/{id}); `include_deleted: true` also finds a deleted one. */
  get(id: string, params?: T.GetEventParams, opts?: CallOptions): Promise<T.Event> {
    return data(this.t.send({ method: "GET", path: `/events/${pathID(id)}`, query: params }, opts));
  }
  /** One event and its ETag, for `ifMatch`. */
  async getWithETag(id: string, opts?: CallOptions): Promise<{ event: T.Event; etag: string }> {
    const a = await this.t.send<T.Event>({ method: "GET", path: `/events/${pathID(id)}` }, opts);
    return { event: a.data, etag: a.headers.get("ETag") ?? "" };
  }
  /** Changes the fields given (PUT /events/{id}). */
  update(id: string, event: T.EventInput, opts?: CallOptions): Promise<T.Event> {
    return data(this.t.send({ method: "PUT", path: `/events/${pathID(id)}`, body: event }, opts));
  }
  /** Soft-deletes an event (DELETE /events/{id}); history is kept. */
  delete(id: string, opts?: CallOptions): Promise<void> {
    return none(this.t.send({ method: "DELETE", path: `/events/${pathID(id)}` }, opts));
  }
  /** Creates or replaces the event with this key (PUT /events/by-key/{key});
   * `created` says which (201 or 200). */
  async upsert(key: string, event: T.EventUpsertInput, opts?: CallOptions): Promise<{ event: T.Event; created: boolean }> {
    const a = await this.t.send<T.Event>({ method: "PUT", path: `/events/by-key/${pathID(key)}`, body: event }, opts);
    return { event: a.data, created: a.status === 201 };
  }
  /** Deletes the event with this key (DELETE /events/by-key/{key}). */
  deleteByKey(key: string, opts?: CallOptions): Promise<void> {
    return none(this.t.send({ method: "DELETE", path: `/events/by-key/${pathID(key)}` }, opts));
  }
  /** Pauses an event, optionally until a moment (POST /events/{id}/pause). */
  pause(id: string, body?: T.PauseRequest, opts?: CallOptions): Promise<T.Event> {
    return data(this.t.send({ method: "POST", path: `/events/${pathID(id)}/pause`, body, idempotent: true }, opts));
  }
  /** Resumes a paused event (POST /events/{id}/resume). */
  resume(id: string, body?: T.ResumeRequest, opts?: CallOptions): Promise<T.Event> {
    return data(this.t.send({ method: "POST", path: `/events/${pathID(id)}/resume`, body, idempotent: true }, opts));
  }
  /** Fires one manual occurrence now (POST /events/{id}/trigger); a retry never fires twice. */
  trigger(id: string, opts?: CallOptions): Promise<T.Occurrence> {
    return data(this.t.send({ method: "POST", path: `/events/${pathID(id)}/trigger`, ensureKey: true }, opts));
  }
  /**
   * Fires the instants of the event's pattern in [from, to], both included, that have no occurrence yet: each
   * gets one, due now, with reason "backfill" (POST /events/{id}/backfill). The range may start before the
   * event's start_time; `to` may not be in the future; at most 10,000 instants. Exceptions and calendars apply
   * unless `respect_exceptions` is false. A one-time or paused event is a ConflictError. A repeat creates nothing
   * more, so it is retried like a PUT (a retry after a lost answer counts those instants as `existing`).
   */
  backfill(id: string, range: T.BackfillInput, opts?: CallOptions): Promise<T.BackfillResult> {
    const iso = (v: Date | string) => (v instanceof Date ? v.toISOString() : v);
    const body = { ...range, from: iso(range.from), to: iso(range.to) };
    return data(this.t.send({ method: "POST", path: `/events/${pathID(id)}/backfill`, body, idempotent: true }, opts));
  }
  /** Issues a new signing secret, shown only in this answer; the previous
   * one keeps signing for `grace` (POST /events/{id}/rotate-secret). */
  rotateSecret(id: string, body: T.RotateSecretRequest = {}, opts?: CallOptions): Promise<T.SecretRotation> {
    return data(this.t.send({ method: "POST", path: `/events/${pathID(id)}/rotate-secret`, body }, opts));
  }
  /** One page of an event's occurrences (GET /events/{id}/occurrences). */
  occurrences(id: string, params?: T.ListEventOccurrencesParams, opts?: CallOptions): Promise<T.Page<T.Occurrence>> {
    return listPage(this.t, `/events/${pathID(id)}/occurrences`, params, opts);
  }
  /** Every occurrence of an event matching params. */
  allOccurrences(id: string, params: T.ListEventOccurrencesParams = {}, opts?: CallOptions) {
    return paginate((cursor) => this.occurrences(id, { ...params, cursor }, opts));
  }
  /** The next instants of an event (GET /events/{id}/preview). */
  preview(id: string, params?: T.PreviewEventParams, opts?: CallOptions): Promise<T.Preview> {
    return data(this.t.send({ method: "GET", path: `/events/${pathID(id)}/preview`, query: params }, opts));
  }
  /** One page of an event's history, oldest first (GET /events/{id}/history). */
  async history(id: string, params?: T.EventHistoryParams, opts?: CallOptions): Promise<T.Page<T.HistoryEntry>> {
    const page = await data(this.t.send<T.HistoryPage>({ method: "GET", path: `/events/${pathID(id)}/history`, query: params }, opts));
    return { items: page.data ?? [], nextCursor: page.pagination?.next_cursor ?? "" };
  }
  /** An event's whole history, oldest first. */
  allHistory(id: string, params: T.EventHistoryParams = {}, opts?: CallOptions) {
    return paginate((cursor) => this.history(id, { ...params, cursor }, opts));
  }
  /** An event's exceptions (GET /events/{id}/exceptions). */
  async exceptions(id: string, opts?: CallOptions): Promise<T.Exception[]> {
    const out = await data(this.t.send<{ data: T.Exception[] }>({ method: "GET", path: `/events/${pathID(id)}/exceptions` }, opts));
    return out.data ?? [];
  }
  /** Skips or moves one planned instant, materialized or not (POST /events/{id}/exceptions). */
  addException(id: string, exception: T.Exception, opts?: CallOptions): Promise<T.Exception> {
    return data(this.t.send({ method: "POST", path: `/events/${pathID(id)}/exceptions`, body: exception }, opts));
  }
  /** Removes the exception at an instant (DELETE /events/{id}/exceptions/{at}). */
  deleteException(id: string, at: Date | string, opts?: CallOptions): Promise<void> {
    const when = at instanceof Date ? at.toISOString() : at;
    return none(this.t.send({ method: "DELETE", path: `/events/${pathID(id)}/exceptions/${pathID(when)}` }, opts));
  }
}

/** /occurrences */
export class Occurrences {
  constructor(private readonly t: Transport) {}

  /** One page in the original envelope, with its total (GET /occurrences). */
  list(params?: T.ListOccurrencesParams, opts?: CallOptions): Promise<T.OccurrencePage> {
    return data(this.t.send({ method: "GET", path: "/occurrences", query: params }, opts));
  }
  /** Every occurrence matching params, following the cursor. */
  all(params: T.ListOccurrencesParams = {}, opts?: CallOptions): AsyncGenerator<T.Occurrence, void, undefined> {
    const { page: _page, ...rest } = params; // a cursor and a page cannot be combined
    return paginate(async (cursor) => {
      const p = await this.list({ ...rest, cursor }, opts);
      return { items: p.data ?? [], nextCursor: p.pagination?.next_cursor ?? "" };
    });
  }
  /** One occurrence (GET /occurrences/{id}). */
  get(id: string, opts?: CallOptions): Promise<T.Occurrence> {
    return data(this.t.send({ method: "GET", path: `/occurrences/${pathID(id)}` }, opts));
  }
  /** The attempts of an occurrence, oldest first (GET /occurrences/{id}/attempts). */
  async attempts(id: string, opts?: CallOptions): Promise<T.Attempt[]> {
    return (await data(this.t.send<T.Attempt[]>({ method: "GET", path: `/occurrences/${pathID(id)}/attempts` }, opts))) ?? [];
  }
  /** Delivers one occurrence again, same delivery id (POST /occurrences/{id}/retry); a fan-out occurrence re-sends
   * its failed deliveries (`replayDelivery`: one subscription's). */
  replay(id: string, opts?: CallOptions): Promise<T.Occurrence> {
    return data(this.t.send({ method: "POST", path: `/occurrences/${pathID(id)}/retry` }, opts));
  }
  /** Delivers one subscription's delivery of a finished fan-out occurrence again, failed or delivered, and no other
   * (POST /occurrences/{id}/retry with `subscription_id`). The subscription's owner may ask for it too; a
   * subscription the occurrence filtered out, or one added after it fired, is a BadRequestError naming
   * `subscription_id`, an occurrence still under way a ConflictError. */
  replayDelivery(id: string, subscriptionId: string, opts?: CallOptions): Promise<T.Occurrence> {
    const body: T.ReplayRequest = { subscription_id: subscriptionId };
    return data(this.t.send({ method: "POST", path: `/occurrences/${pathID(id)}/retry`, body }, opts));
  }
  /** One page of a fan-out occurrence's deliveries, one per subscription (filtered ones included) in subscription
   * id order, each with its attempts (GET /occurrences/{id}/deliveries); an occurrence whose event runs an action
   * has none. */
  async deliveries(id: string, params?: T.ListOccurrenceDeliveriesParams, opts?: CallOptions): Promise<T.Page<T.FanoutDelivery>> {
    const page = await data(this.t.send<T.FanoutDeliveryPage>({ method: "GET", path: `/occurrences/${pathID(id)}/deliveries`, query: params }, opts));
    return { items: page.data ?? [], nextCursor: page.pagination?.next_cursor ?? "" };
  }
  /** Every delivery of a fan-out occurrence, page after page. */
  allDeliveries(id: string, params: T.ListOccurrenceDeliveriesParams = {}, opts?: CallOptions): AsyncGenerator<T.FanoutDelivery, void, undefined> {
    return paginate((cursor) => this.deliveries(id, { ...params, cursor }, opts));
  }
  /** Re-queues every terminal occurrence matching the filter (POST /occurrences/retry). */
  replayMatching(filter: T.RetryFilter, opts?: CallOptions): Promise<T.RetryResult> {
    return data(this.t.send({ method: "POST", path: "/occurrences/retry", body: filter }, opts));
  }
  /** Skips one occurrence still ahead (POST /occurrences/{id}/skip). */
  skip(id: string, body?: T.SkipRequest, opts?: CallOptions): Promise<T.Occurrence> {
    return data(this.t.send({ method: "POST", path: `/occurrences/${pathID(id)}/skip`, body }, opts));
  }
  /** Undoes a skip while the instant is still ahead (POST /occurrences/{id}/unskip). */
  unskip(id: string, opts?: CallOptions): Promise<T.Occurrence> {
    return data(this.t.send({ method: "POST", path: `/occurrences/${pathID(id)}/unskip` }, opts));
  }
  /** Moves one occurrence still ahead, keeping its id (POST /occurrences/{id}/move). */
  move(id: string, body: T.MoveRequest, opts?: CallOptions): Promise<T.Occurrence> {
    return data(this.t.send({ method: "POST", path: `/occurrences/${pathID(id)}/move`, body }, opts));
  }
  /**
   * Completes the run of a callback event's occurrence: `status` "succeeded" (the occurrence ends completed) or
   * "failed", and any JSON `output` up to 16 KB (POST /occurrences/{id}/complete). Takes a token that may write
   * the event, or the delivery's run token as the client's token. The same report again answers the same; a
   * different one after the end, or any after a timeout, is a ConflictError. Retried like a PUT.
   */
  complete(id: string, report: T.RunReport, opts?: CallOptions): Promise<T.Occurrence> {
    return data(this.t.send({ method: "POST", path: `/occurrences/${pathID(id)}/complete`, body: report, idempotent: true }, opts));
  }
  /** Says the run of a callback event's occurrence is alive: its deadline moves to now + the event's max_runtime
   * (POST /occurrences/{id}/heartbeat). Same tokens as complete; a run no longer under way is a ConflictError. */
  heartbeat(id: string, opts?: CallOptions): Promise<T.Occurrence> {
    return data(this.t.send({ method: "POST", path: `/occurrences/${pathID(id)}/heartbeat`, idempotent: true }, opts));
  }
}

/**
 * /concurrency-keys: the keys events share with `concurrency: { key, limit }`. At most `limit` occurrences of all
 * the events naming a key are in flight at once, installation-wide; the others wait (pending, reason
 * "concurrency_wait"), oldest instant first.
 */
export class ConcurrencyKeys {
  constructor(private readonly t: Transport) {}

  /** One page of the keys the token can see, in key order (GET /concurrency-keys). */
  async list(params?: T.ListConcurrencyKeysParams, opts?: CallOptions): Promise<T.Page<T.ConcurrencyKey>> {
    const page = await data(this.t.send<T.ConcurrencyKeyPage>({ method: "GET", path: "/concurrency-keys", query: params }, opts));
    return { items: page.data ?? [], nextCursor: page.pagination?.next_cursor ?? "" };
  }
  /** Every key the token can see, page after page. */
  all(params: T.ListConcurrencyKeysParams = {}, opts?: CallOptions): AsyncGenerator<T.ConcurrencyKey, void, undefined> {
    return paginate((cursor) => this.list({ ...params, cursor }, opts));
  }
  /** One key: its limit, occurrences in flight and waiting, and whether it is paused (GET /concurrency-keys/{key});
   * a NotFoundError when no event the token can read names it. */
  get(key: string, opts?: CallOptions): Promise<T.ConcurrencyKey> {
    return data(this.t.send({ method: "GET", path: `/concurrency-keys/${pathID(key)}` }, opts));
  }
  /** Holds back the key's occurrences: none takes a slot until resume; the runs in flight go on
   * (POST /concurrency-keys/{key}/pause). */
  pause(key: string, opts?: CallOptions): Promise<T.ConcurrencyKey> {
    return data(this.t.send({ method: "POST", path: `/concurrency-keys/${pathID(key)}/pause`, idempotent: true }, opts));
  }
  /** Lets a paused key's oldest waiting occurrences go, as many as it has room for
   * (POST /concurrency-keys/{key}/resume). */
  resume(key: string, opts?: CallOptions): Promise<T.ConcurrencyKey> {
    return data(this.t.send({ method: "POST", path: `/concurrency-keys/${pathID(key)}/resume`, idempotent: true }, opts));
  }
}

/** /schedules */
export class Schedules {
  constructor(private readonly t: Transport) {}

  /** The next instants of a rule, creating nothing (POST /schedules/preview). */
  preview(request: T.PreviewRequest, opts?: CallOptions): Promise<T.Preview> {
    return data(this.t.send({ method: "POST", path: "/schedules/preview", body: request, idempotent: true }, opts));
  }
}

/** /calendars: exclusion calendars. */
export class Calendars {
  constructor(private readonly t: Transport) {}

  /** Stores a calendar (POST /calendars). */
  create(calendar: T.CalendarInput, opts?: CallOptions): Promise<T.Calendar> {
    return data(this.t.send({ method: "POST", path: "/calendars", body: calendar }, opts));
  }
  /** One page of calendars (GET /calendars). */
  list(params?: T.ListCalendarsParams, opts?: CallOptions): Promise<T.Page<T.Calendar>> {
    return listPage(this.t, "/calendars", params, opts);
  }
  /** Every calendar matching params. */
  all(params: T.ListCalendarsParams = {}, opts?: CallOptions): AsyncGenerator<T.Calendar, void, undefined> {
    return paginate((cursor) => this.list({ ...params, cursor }, opts));
  }
  /** One calendar (GET /calendars/{id}). */
  get(id: string, opts?: CallOptions): Promise<T.Calendar> {
    return data(this.t.send({ method: "GET", path: `/calendars/${pathID(id)}` }, opts));
  }
  /** Replaces a calendar (PUT /calendars/{id}). */
  update(id: string, calendar: T.CalendarInput, opts?: CallOptions): Promise<T.Calendar> {
    return data(this.t.send({ method: "PUT", path: `/calendars/${pathID(id)}`, body: calendar }, opts));
  }
  /** Removes a calendar no event uses (DELETE /calendars/{id}; 409 while in use). */
  delete(id: string, opts?: CallOptions): Promise<void> {
    return none(this.t.send({ method: "DELETE", path: `/calendars/${pathID(id)}` }, opts));
  }
}

/** /endpoints: shared delivery targets. */
export class Endpoints {
  constructor(private readonly t: Transport) {}

  /** Stores an endpoint (POST /endpoints); the answer's secret is shown only here. */
  create(endpoint: T.EndpointInput, opts?: CallOptions): Promise<T.Endpoint> {
    return data(this.t.send({ method: "POST", path: "/endpoints", body: endpoint }, opts));
  }
  /** One page of endpoints (GET /endpoints). */
  list(params?: T.ListEndpointsParams, opts?: CallOptions): Promise<T.Page<T.Endpoint>> {
    return listPage(this.t, "/endpoints", params, opts);
  }
  /** Every endpoint matching params. */
  all(params: T.ListEndpointsParams = {}, opts?: CallOptions): AsyncGenerator<T.Endpoint, void, undefined> {
    return paginate((cursor) => this.list({ ...params, cursor }, opts));
  }
  /** One endpoint with its state and health (GET /endpoints/{id}). */
  get(id: string, opts?: CallOptions): Promise<T.Endpoint> {
    return data(this.t.send({ method: "GET", path: `/endpoints/${pathID(id)}` }, opts));
  }
  /** Changes the members given; a null clears an optional one (PATCH /endpoints/{id}). */
  update(id: string, patch: T.EndpointPatch | Record<string, unknown>, opts?: CallOptions): Promise<T.Endpoint> {
    return data(this.t.send({ method: "PATCH", path: `/endpoints/${pathID(id)}`, body: patch }, opts));
  }
  /** Removes an endpoint no event names (DELETE /endpoints/{id}). */
  delete(id: string, opts?: CallOptions): Promise<void> {
    return none(this.t.send({ method: "DELETE", path: `/endpoints/${pathID(id)}` }, opts));
  }
  /** Makes an endpoint healthy again (POST /endpoints/{id}/enable). */
  enable(id: string, opts?: CallOptions): Promise<T.Endpoint> {
    return data(this.t.send({ method: "POST", path: `/endpoints/${pathID(id)}/enable`, idempotent: true }, opts));
  }
  /** Stops deliveries to an endpoint (POST /endpoints/{id}/disable). */
  disable(id: string, opts?: CallOptions): Promise<T.Endpoint> {
    return data(this.t.send({ method: "POST", path: `/endpoints/${pathID(id)}/disable`, idempotent: true }, opts));
  }
  /** Issues a new signing secret; the old one signs until `grace` ends (POST /endpoints/{id}/rotate-secret). */
  rotateSecret(id: string, body: { grace?: string } = {}, opts?: CallOptions): Promise<T.Endpoint> {
    return data(this.t.send({ method: "POST", path: `/endpoints/${pathID(id)}/rotate-secret`, body }, opts));
  }
  /** Sends one signed test webhook now and returns what the receiver answered; not logged, not counted by the
   * circuit (POST /endpoints/{id}/test). */
  test(id: string, opts?: CallOptions): Promise<T.EndpointTestResult> {
    return data(this.t.send({ method: "POST", path: `/endpoints/${pathID(id)}/test` }, opts));
  }

  /** One page of an endpoint's circuit transitions, newest first (GET /endpoints/{id}/circuit-history). */
  async circuitHistory(id: string, params?: T.CircuitHistoryParams, opts?: CallOptions): Promise<T.Page<T.CircuitEntry>> {
    const page = await data(this.t.send<T.CircuitHistoryPage>({ method: "GET", path: `/endpoints/${pathID(id)}/circuit-history`, query: params }, opts));
    return { items: page.data ?? [], nextCursor: page.pagination?.next_cursor ?? "" };
  }

  /** An endpoint's kept circuit history, newest first. */
  allCircuitHistory(id: string, params: T.CircuitHistoryParams = {}, opts?: CallOptions) {
    return paginate((cursor) => this.circuitHistory(id, { ...params, cursor }, opts));
  }
}

/** /topics: the catalogue of what can fire. Every token reads it; only admins change it. */
export class Topics {
  constructor(private readonly t: Transport) {}

  /** Adds a topic (POST /topics, admin): `name` (dot-separated segments of a-z 0-9 _ -, fixed once created),
   * `description`, `schema` (a JSON Schema of the metadata of events targeting it); a taken name is a
   * ConflictError. */
  create(topic: T.TopicRequest, opts?: CallOptions): Promise<T.Topic> {
    return data(this.t.send({ method: "POST", path: "/topics", body: topic }, opts));
  }
  /** One page of the catalogue, in name order (GET /topics). */
  async list(params?: T.ListTopicsParams, opts?: CallOptions): Promise<T.Page<T.Topic>> {
    const page = await data(this.t.send<T.TopicPage>({ method: "GET", path: "/topics", query: params }, opts));
    return { items: page.data ?? [], nextCursor: page.pagination?.next_cursor ?? "" };
  }
  /** The whole catalogue, in name order, page after page. */
  all(params: T.ListTopicsParams = {}, opts?: CallOptions): AsyncGenerator<T.Topic, void, undefined> {
    return paginate((cursor) => this.list({ ...params, cursor }, opts));
  }
  /** One topic (GET /topics/{name}). */
  get(name: string, opts?: CallOptions): Promise<T.Topic> {
    return data(this.t.send({ method: "GET", path: `/topics/${pathID(name)}` }, opts));
  }
  /** Changes the members given, `description` or `schema`; `schema: null` removes the schema
   * (PATCH /topics/{name}, admin; `ifMatch` makes it conditional). */
  update(name: string, topic: T.TopicRequest, opts?: CallOptions): Promise<T.Topic> {
    return data(this.t.send({ method: "PATCH", path: `/topics/${pathID(name)}`, body: topic }, opts));
  }
  /** Removes a topic (DELETE /topics/{name}, admin); a ConflictError while a subscription names it. */
  delete(name: string, opts?: CallOptions): Promise<void> {
    return none(this.t.send({ method: "DELETE", path: `/topics/${pathID(name)}` }, opts));
  }
}

/** /subscriptions: endpoints subscribed to a topic, or to a pattern of topics (`*` segments), with a CEL filter;
 * scoped by tags like endpoints. */
export class Subscriptions {
  constructor(private readonly t: Transport) {}

  /** Subscribes an endpoint the token can read (POST /subscriptions): `topic` (a topic that exists, or a pattern
   * such as "billing.*"), `endpoint_id`, `filter`, `description`, `tags`, `paused`. */
  create(subscription: T.TopicSubscriptionRequest, opts?: CallOptions): Promise<T.TopicSubscription> {
    return data(this.t.send({ method: "POST", path: "/subscriptions", body: subscription }, opts));
  }
  /** One page of the subscriptions the token can read, newest first (GET /subscriptions): topic (the name or
   * pattern as written), endpoint_id, paused, tags, tags_all, limit, cursor. */
  async list(params?: T.ListSubscriptionsParams, opts?: CallOptions): Promise<T.Page<T.TopicSubscription>> {
    const page = await data(this.t.send<T.TopicSubscriptionPage>({ method: "GET", path: "/subscriptions", query: params }, opts));
    return { items: page.data ?? [], nextCursor: page.pagination?.next_cursor ?? "" };
  }
  /** Every subscription matching params, page after page. */
  all(params: T.ListSubscriptionsParams = {}, opts?: CallOptions): AsyncGenerator<T.TopicSubscription, void, undefined> {
    return paginate((cursor) => this.list({ ...params, cursor }, opts));
  }
  /** One subscription (GET /subscriptions/{id}). */
  get(id: string, opts?: CallOptions): Promise<T.TopicSubscription> {
    return data(this.t.send({ method: "GET", path: `/subscriptions/${pathID(id)}` }, opts));
  }
  /** Changes the members given; `filter: null` delivers every firing again, `description: null` clears it
   * (PATCH /subscriptions/{id}; `ifMatch` makes it conditional). */
  update(id: string, subscription: T.TopicSubscriptionRequest, opts?: CallOptions): Promise<T.TopicSubscription> {
    return data(this.t.send({ method: "PATCH", path: `/subscriptions/${pathID(id)}`, body: subscription }, opts));
  }
  /** Removes a subscription (DELETE /subscriptions/{id}). */
  delete(id: string, opts?: CallOptions): Promise<void> {
    return none(this.t.send({ method: "DELETE", path: `/subscriptions/${pathID(id)}` }, opts));
  }
  /** Stops deliveries to the subscription until resume (a PATCH of `paused: true`; safe to repeat). */
  pause(id: string, opts?: CallOptions): Promise<T.TopicSubscription> {
    return data(this.t.send({ method: "PATCH", path: `/subscriptions/${pathID(id)}`, body: { paused: true }, idempotent: true }, opts));
  }
  /** Delivers the subscription's firings again (a PATCH of `paused: false`; safe to repeat). */
  resume(id: string, opts?: CallOptions): Promise<T.TopicSubscription> {
    return data(this.t.send({ method: "PATCH", path: `/subscriptions/${pathID(id)}`, body: { paused: false }, idempotent: true }, opts));
  }
  /** One page of the attempts made to deliver the subscription's firings, newest first, across occurrences: each
   * names its `occurrence_id` and `subscription_id` (GET /subscriptions/{id}/deliveries). */
  async deliveries(id: string, params?: T.ListSubscriptionDeliveriesParams, opts?: CallOptions): Promise<T.Page<T.Attempt>> {
    const page = await data(this.t.send<T.AttemptPage>({ method: "GET", path: `/subscriptions/${pathID(id)}/deliveries`, query: params }, opts));
    return { items: page.data ?? [], nextCursor: page.pagination?.next_cursor ?? "" };
  }
  /** Every attempt made for the subscription, newest first, page after page. */
  allDeliveries(id: string, params: T.ListSubscriptionDeliveriesParams = {}, opts?: CallOptions): AsyncGenerator<T.Attempt, void, undefined> {
    return paginate((cursor) => this.deliveries(id, { ...params, cursor }, opts));
  }
}

/** /tokens (admin) */
export class Tokens {
  constructor(private readonly t: Transport) {}

  /** Mints a JWT, in this answer only (POST /tokens). */
  create(request: T.TokenRequest, opts?: CallOptions): Promise<T.Token> {
    return data(this.t.send({ method: "POST", path: "/tokens", body: request }, opts));
  }
  /** Lists tokens, never the JWTs (GET /tokens). */
  async list(opts?: CallOptions): Promise<T.Token[]> {
    return (await data(this.t.send<T.Token[]>({ method: "GET", path: "/tokens" }, opts))) ?? [];
  }
  /** Revokes a token (DELETE /tokens/{id}). */
  revoke(id: string, opts?: CallOptions): Promise<void> {
    return none(this.t.send({ method: "DELETE", path: `/tokens/${pathID(id)}` }, opts));
  }
}

/** /portal-links: one-time links to the portal, the console reduced to one customer's tags. */
export class PortalLinks {
  constructor(private readonly t: Transport) {}

  /** Makes a portal link (POST /portal-links): `tags` (required, each inside the token's scope), `expires_in`
   * ("1h" by default, at most "24h") and `return_url` (the portal's Back link). Open the answer's `url` once,
   * before its `expires_at`. */
  create(link: T.PortalLinkRequest, opts?: CallOptions): Promise<T.PortalLink> {
    return data(this.t.send({ method: "POST", path: "/portal-links", body: link }, opts));
  }
  /** Uses a link's code, once (POST /portal-links/redeem; no token needed): the portal session's token, limited to
   * the link's tags; what the console does when the link is opened. A used, expired or unknown code is a
   * NotFoundError. */
  redeem(code: string, opts?: CallOptions): Promise<T.PortalSession> {
    return data(this.t.send({ method: "POST", path: "/portal-links/redeem", body: { code } }, opts));
  }
}

/** /notification-channels (admin) */
export class NotificationChannels {
  constructor(private readonly t: Transport) {}

  /** Adds a channel (POST /notification-channels). */
  create(channel: T.NotificationChannelRequest, opts?: CallOptions): Promise<T.NotificationChannel> {
    return data(this.t.send({ method: "POST", path: "/notification-channels", body: channel }, opts));
  }
  /** Lists the channels (GET /notification-channels). */
  async list(opts?: CallOptions): Promise<T.NotificationChannel[]> {
    return (await data(this.t.send<T.NotificationChannel[]>({ method: "GET", path: "/notification-channels" }, opts))) ?? [];
  }
  /** One channel (GET /notification-channels/{id}). */
  get(id: string, opts?: CallOptions): Promise<T.NotificationChannel> {
    return data(this.t.send({ method: "GET", path: `/notification-channels/${pathID(id)}` }, opts));
  }
  /** Changes the members given (PATCH /notification-channels/{id}). */
  update(id: string, channel: T.NotificationChannelRequest, opts?: CallOptions): Promise<T.NotificationChannel> {
    return data(this.t.send({ method: "PATCH", path: `/notification-channels/${pathID(id)}`, body: channel }, opts));
  }
  /** Removes a channel (DELETE /notification-channels/{id}). */
  delete(id: string, opts?: CallOptions): Promise<void> {
    return none(this.t.send({ method: "DELETE", path: `/notification-channels/${pathID(id)}` }, opts));
  }
  /** Sends a test notice now (POST /notification-channels/{id}/test). */
  test(id: string, opts?: CallOptions): Promise<T.NotificationTestResult> {
    return data(this.t.send({ method: "POST", path: `/notification-channels/${pathID(id)}/test` }, opts));
  }

  /** One page of the notices sent to a channel, newest first (GET /notification-channels/{id}/notices). */
  async notices(id: string, params?: T.NoticesParams, opts?: CallOptions): Promise<T.Page<T.SentNotice>> {
    const page = await data(this.t.send<T.NoticePage>({ method: "GET", path: `/notification-channels/${pathID(id)}/notices`, query: params }, opts));
    return { items: page.data ?? [], nextCursor: page.pagination?.next_cursor ?? "" };
  }
}

/** A client of one Qhronos server: `new Qhronos({ baseUrl, token })`. */
export class Qhronos {
  readonly events: Events;
  readonly occurrences: Occurrences;
  readonly schedules: Schedules;
  readonly calendars: Calendars;
  readonly endpoints: Endpoints;
  readonly tokens: Tokens;
  readonly notificationChannels: NotificationChannels;
  readonly concurrencyKeys: ConcurrencyKeys;
  /** /topics, the catalogue of what can fire; `subscriptions` is /subscriptions, the endpoints subscribed to them. */
  readonly topics: Topics;
  readonly subscriptions: Subscriptions;
  /** /portal-links, one-time links to the portal. */
  readonly portalLinks: PortalLinks;
  private readonly t: Transport;

  constructor(options: ClientOptions) {
    this.t = new Transport(options);
    this.events = new Events(this.t);
    this.occurrences = new Occurrences(this.t);
    this.schedules = new Schedules(this.t);
    this.calendars = new Calendars(this.t);
    this.endpoints = new Endpoints(this.t);
    this.tokens = new Tokens(this.t);
    this.notificationChannels = new NotificationChannels(this.t);
    this.concurrencyKeys = new ConcurrencyKeys(this.t);
    this.topics = new Topics(this.t);
    this.subscriptions = new Subscriptions(this.t);
    this.portalLinks = new PortalLinks(this.t);
  }

  /** The server's URL as given. */
  get baseUrl(): string {
    return this.t.baseUrl;
  }
  /** Whether the process is alive (GET /health). */
  health(opts?: CallOptions): Promise<T.Health> {
    return this.get("/health", opts);
  }
  /** The same as health, at its alias (GET /healthz). */
  healthz(opts?: CallOptions): Promise<T.Health> {
    return this.get("/healthz", opts);
  }
  /** Whether the database (and Redis) answer (GET /ready); a server that is
   * not ready throws an UnavailableError whose `data` is the same body. */
  ready(opts?: CallOptions): Promise<T.Ready> {
    return this.get("/ready", opts);
  }
  /** The instance's state, without secrets (GET /status). */
  status(opts?: CallOptions): Promise<T.Status> {
    return this.get("/status", opts);
  }
  /** Counts, durations and lateness over a window (GET /stats). */
  stats(params?: T.StatsParams, opts?: CallOptions): Promise<T.Stats> {
    return data(this.t.send({ method: "GET", path: "/stats", query: params }, opts));
  }
  /** Attempts per time bucket (GET /stats/timeline). */
  statsTimeline(params?: T.StatsTimelineParams, opts?: CallOptions): Promise<T.Timeline> {
    return data(this.t.send({ method: "GET", path: "/stats/timeline", query: params }, opts));
  }
  /**
   * How the instants of a window went, per event, endpoint or tag: due, on time or late against a tolerance,
   * missed, skipped, failed, lateness percentiles and success ratio (GET /stats/punctuality).
   */
  punctuality(params?: T.PunctualityParams, opts?: CallOptions): Promise<T.PunctualityReport> {
    return data(this.t.send({ method: "GET", path: "/stats/punctuality", query: params }, opts));
  }
  /** The server's OpenAPI document (GET /openapi.json). */
  openapi(opts?: CallOptions): Promise<Record<string, unknown>> {
    return this.get("/openapi.json", opts);
  }
  /** The Prometheus text exposition (GET /metrics). */
  metrics(opts?: CallOptions): Promise<string> {
    return data(this.t.send<string>({ method: "GET", path: "/metrics", text: true }, opts));
  }

  /** Connects to /ws with the client's token and subscribes (GET /ws). */
  subscribe(subscription: Subscription, opts?: SubscribeOptions): Promise<Connection> {
    return subscribe(this.t.baseUrl, this.t.token, subscription, opts);
  }

  /** send is the raw request, for routes newer than this client. */
  send<D>(request: Request, opts?: CallOptions): Promise<Answer<D>> {
    return this.t.send<D>(request, opts);
  }

  private get<D>(path: string, opts?: CallOptions): Promise<D> {
    return data(this.t.send<D>({ method: "GET", path }, opts));
  }
}
