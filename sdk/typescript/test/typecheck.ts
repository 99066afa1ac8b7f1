// Compiled (not run) by `npm test`: the public types are the generated ones,
// so a misspelt field or a wrong enum value fails the build of a caller.
import {
  type ConcurrencyKey,
  DeliveryRun,
  type Event,
  type FanoutDelivery,
  NotFoundError,
  type Occurrence,
  Qhronos,
  type Topic,
  type TopicSubscription,
  verifyDelivery,
} from "../dist/index.js";

export async function usage(q: Qhronos): Promise<string> {
  const ev: Event = await q.events.create({ name: "n", start_time: "in 1 hour", webhook: "https://example.com/h" });
  // @ts-expect-error: not a field of EventInput
  await q.events.create({ nmae: "typo" });
  // @ts-expect-error: not a status of the document
  await q.events.list({ tags: ["a"], status: 3 });
  // @ts-expect-error: not an occurrence order of the document
  await q.occurrences.list({ order: "sideways" });
  for await (const occ of q.occurrences.all({ event_id: ev.id })) occ.status satisfies string;
  const filled = await q.events.backfill(ev.id, { from: new Date(0), to: "1 hour ago" });
  filled.created satisfies number;
  // @ts-expect-error: a backfill needs its range's end
  await q.events.backfill(ev.id, { from: "30 days ago" });
  const job = await q.events.create({ name: "job", start_time: "in 1 hour", webhook: "https://example.com/h", completion: "callback", max_runtime: "30m" });
  job.completion satisfies "response" | "callback" | undefined;
  // @ts-expect-error: not a completion of the document
  await q.events.update(job.id, { completion: "later" });
  const done: Occurrence = await q.occurrences.complete(job.id, { status: "succeeded", output: { rows: 1 } });
  done.run?.duration_ms satisfies number | null | undefined;
  // @ts-expect-error: a run ends succeeded or failed
  await q.occurrences.complete(job.id, { status: "done" });
  (await q.occurrences.heartbeat(job.id)).status satisfies Occurrence["status"];
  const synced = await q.events.create({ name: "sync", start_time: "in 1 hour", webhook: "https://example.com/h", concurrency: { key: "customer-42", limit: 2 } });
  synced.concurrency?.limit satisfies number | undefined;
  await q.events.update(synced.id, { concurrency: null });
  // @ts-expect-error: a concurrency key needs its limit
  await q.events.update(synced.id, { concurrency: { key: "customer-42" } });
  const k: ConcurrencyKey = await q.concurrencyKeys.get("customer-42");
  [k.in_flight, k.waiting] satisfies number[];
  k.paused_at satisfies string | null;
  (await q.concurrencyKeys.pause(k.key)).paused satisfies boolean;
  for await (const key of q.concurrencyKeys.all({ limit: 100 })) key.limit satisfies number;
  // @ts-expect-error: not a parameter of GET /concurrency-keys
  await q.concurrencyKeys.list({ paused: true });
  const topic: Topic = await q.topics.create({ name: "billing.invoice.paid", schema: { type: "object" } });
  topic.version satisfies number;
  await q.topics.update(topic.name, { schema: null }, { ifMatch: '"billing.invoice.paid-v1"' });
  // @ts-expect-error: not a member of TopicRequest
  await q.topics.create({ name: "billing.invoice.void", title: "void" });
  for await (const t of q.topics.all({ limit: 100 })) t.name satisfies string;
  const sub: TopicSubscription = await q.subscriptions.create({ topic: "billing.*", endpoint_id: "ep", filter: "metadata.amount > 100" });
  sub.filter satisfies string | null;
  await q.subscriptions.update(sub.id, { filter: null, description: null });
  (await q.subscriptions.pause(sub.id)).paused satisfies boolean;
  await q.subscriptions.resume(sub.id);
  await q.subscriptions.list({ topic: "billing.*", paused: false, tags: ["a"], tags_all: ["b", "c"] });
  // @ts-expect-error: paused is a boolean
  await q.subscriptions.update(sub.id, { paused: "yes" });
  // @ts-expect-error: not a parameter of GET /subscriptions
  await q.subscriptions.list({ status: "active" });
  for await (const s of q.subscriptions.all({ endpoint_id: sub.endpoint_id })) s.tags satisfies string[];
  const digest: Event = await q.events.create({ name: "digest", start_time: "in 1 hour", topic: "digest.daily", metadata: { region: "eu" } });
  digest.topic satisfies string | null | undefined;
  const fired: Occurrence = await q.events.trigger(digest.id);
  fired.fanout?.failed satisfies number | undefined;
  for await (const d of q.occurrences.allDeliveries(fired.id, { limit: 100 })) {
    d.status satisfies "delivered" | "failed" | "pending" | "filtered";
    d.attempts[0]?.subscription_id satisfies string | undefined;
  }
  const delivery: FanoutDelivery | undefined = (await q.occurrences.deliveries(fired.id)).items[0];
  delivery?.next_attempt_at satisfies string | null | undefined;
  (await q.occurrences.replayDelivery(fired.id, sub.id)).status satisfies Occurrence["status"];
  for await (const a of q.subscriptions.allDeliveries(sub.id)) a.occurrence_id satisfies string;
  (await q.subscriptions.deliveries(sub.id, { limit: 10 })).nextCursor satisfies string;
  // @ts-expect-error: not a parameter of GET /subscriptions/{id}/deliveries
  await q.subscriptions.deliveries(sub.id, { status: "failed" });
  const d = await verifyDelivery({ headers: {}, body: "" }, "secret");
  if (d.run) {
    d.run.deadline satisfies string;
    await d.run.heartbeat();
    await new DeliveryRun(d.run, { retries: 5 }).complete("failed", { error: "disk full" });
    // @ts-expect-error: a run ends succeeded or failed
    await d.run.complete("ok");
  }
  try {
    await q.events.get(ev.id);
  } catch (e) {
    if (e instanceof NotFoundError) return `${e.status} ${e.field ?? ""}`;
  }
  return d.occurrence_id;
}
