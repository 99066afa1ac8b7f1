// The client and verifyDelivery against the real qhronosd (see harness.js).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";

import {
  APIError,
  BadRequestError,
  ConflictError,
  DeliveryRun,
  ForbiddenError,
  NotFoundError,
  PreconditionFailedError,
  Qhronos,
  RateLimitError,
  UnauthorizedError,
  WebhookVerificationError,
  verifyDelivery,
} from "../dist/index.js";
import { repoRoot, startReceiver, startServer, waitFor } from "./harness.js";

const tagOf = (p) => `${p}-${randomBytes(4).toString("hex")}`;
const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();

let srv;
let q;
let receiver;

before(async () => {
  srv = await startServer();
  q = new Qhronos({ baseUrl: srv.url, token: srv.token });
  receiver = await startReceiver();
});

after(async () => {
  await receiver?.close();
  await srv?.stop();
});

describe(`against qhronosd (${process.env.QHRONOS_SDK_DATABASE_URL ? "postgres+redis" : "sqlite"})`, () => {
  test("events: create, get, list, update, pause, resume, history, preview, delete", async () => {
    const tag = tagOf("life");
    const ev = await q.events.create({
      name: "standup",
      start_time: "in 1 hour",
      rrule: "FREQ=DAILY",
      webhook: "https://example.com/hook",
      tags: [tag],
      metadata: { team: "core" },
    });
    assert.match(ev.id, /^[0-9a-f-]{36}$/);
    assert.equal(ev.status, "active");
    assert.deepEqual(ev.metadata, { team: "core" });

    assert.equal((await q.events.get(ev.id)).name, "standup");
    const page = await q.events.list({ tags: [tag] });
    assert.deepEqual(page.items.map((e) => e.id), [ev.id]);
    assert.equal(page.nextCursor, "");

    const { etag } = await q.events.getWithETag(ev.id);
    assert.ok(etag);
    const updated = await q.events.update(ev.id, { description: "daily" }, { ifMatch: etag });
    assert.equal(updated.description, "daily");
    await assert.rejects(q.events.update(ev.id, { description: "stale" }, { ifMatch: etag }), PreconditionFailedError);

    const paused = await q.events.pause(ev.id, { reason: "holiday" });
    assert.equal(paused.status, "paused");
    assert.equal(paused.pause_reason, "holiday");
    assert.equal((await q.events.resume(ev.id)).status, "active");

    const preview = await q.events.preview(ev.id, { count: 3 });
    assert.equal(preview.instants.length, 3);
    const sched = await q.schedules.preview({ rrule: "FREQ=HOURLY", start_time: "in 1 hour", count: 2 });
    assert.equal(sched.instants.length, 2);

    const history = [];
    for await (const h of q.events.allHistory(ev.id, { limit: 1 })) history.push(h);
    assert.ok(history.length >= 4, `create, update, pause, resume: got ${history.length}`);

    await q.events.delete(ev.id);
    await assert.rejects(q.events.get(ev.id), NotFoundError);
    assert.equal((await q.events.get(ev.id, { include_deleted: true })).status, "deleted");
  });

  test("an Idempotency-Key replays the first create", async () => {
    const key = `k-${randomBytes(8).toString("hex")}`;
    const body = { name: "once", start_time: inAnHour(), webhook: "https://example.com/h" };
    const a = await q.events.create(body, { idempotencyKey: key });
    const b = await q.events.create(body, { idempotencyKey: key });
    assert.equal(a.id, b.id);
  });

  test("createMany chunks by 1,000 and answers each event in order", async () => {
    const tag = tagOf("batch");
    const start = inAnHour();
    const events = Array.from({ length: 1205 }, (_, i) => ({ name: `bulk ${i}`, start_time: start, webhook: "https://example.com/h", tags: [tag] }));
    events[1100].start_time = "2001-01-01T00:00:00Z";
    const key = `bulk-${randomBytes(8).toString("hex")}`;
    const results = await q.events.createMany(events, { idempotencyKey: key });
    assert.deepEqual(results.map((r) => r.index), [...events.keys()]);
    assert.equal(results[1100].status, 400);
    assert.equal(results[1100].field, "start_time");
    assert.equal(results.filter((r) => r.status === 201).length, 1204);
    assert.equal(results[1204].event?.name, "bulk 1204");
    const again = await q.events.createMany(events, { idempotencyKey: key });
    assert.deepEqual(again.map((r) => r.event?.id), results.map((r) => r.event?.id));
    let n = 0;
    for await (const _ of q.events.all({ tags: [tag], limit: 500 })) n++;
    assert.equal(n, 1204);
  });

  test("errors: 400 names the field, 401, 404, 409", async () => {
    const err = await q.events
      .create({ name: "past", start_time: "2001-01-01T00:00:00Z", webhook: "https://example.com/h" })
      .catch((e) => e);
    assert.ok(err instanceof BadRequestError && err instanceof APIError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.field, "start_time");

    await assert.rejects(q.events.get("6f1c1d4e-9a0b-4c1e-8f00-000000000000"), (e) => e instanceof NotFoundError && e.status === 404);
    const stranger = new Qhronos({ baseUrl: srv.url, token: "not-a-token" });
    await assert.rejects(stranger.events.list(), (e) => e instanceof UnauthorizedError && e.status === 401);

    const cal = await q.calendars.create({ name: "in use", dates: ["2031-12-25"] });
    await q.events.create({ name: "uses", start_time: inAnHour(), webhook: "https://example.com/h", calendars: [{ id: cal.id }] });
    await assert.rejects(q.calendars.delete(cal.id), (e) => e instanceof ConflictError && e.status === 409);
  });

  test("429: Retry-After is waited and the call succeeds; without retries it is a RateLimitError", async () => {
    const minted = await q.tokens.create({ sub: "sdk-ts", access: "read", expires_at: inAnHour() });
    let limited = 0;
    const counting = async (input, init) => {
      const res = await fetch(input, init);
      if (res.status === 429) limited++;
      return res;
    };
    // Eight calls at once against a bucket of 3 refilled at 2/s: some are
    // refused, wait for Retry-After and succeed.
    const reader = new Qhronos({ baseUrl: srv.url, token: minted.token, retries: 20, fetch: counting });
    const pages = await Promise.all(Array.from({ length: 8 }, () => reader.events.list({ limit: 1 })));
    assert.equal(pages.length, 8);
    assert.ok(limited > 0, "some of 8 simultaneous calls met the limit");

    const impatient = new Qhronos({ baseUrl: srv.url, token: minted.token, retries: 0 });
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => impatient.events.list({ limit: 1 })));
    const err = results.find((r) => r.status === "rejected")?.reason;
    assert.ok(err instanceof RateLimitError, String(err));
    assert.equal(err.status, 429);
    assert.ok(err.retryAfter >= 1);
  });

  test("an aborted signal stops a call, and a wait between retries", async () => {
    await assert.rejects(q.health({ signal: AbortSignal.abort() }), (e) => e.name === "AbortError");
    const minted = await q.tokens.create({ sub: "sdk-ts-abort", access: "read", expires_at: inAnHour() });
    const waiting = new Qhronos({ baseUrl: srv.url, token: minted.token, retries: 100 });
    const ac = new AbortController();
    let calls = 0;
    const run = (async () => {
      for (;;) {
        await waiting.events.list({ limit: 1 }, { signal: ac.signal });
        calls++;
      }
    })();
    await waitFor("a few calls", () => calls >= 4);
    ac.abort();
    await assert.rejects(run, (e) => e.name === "AbortError");
  });

  test("cursor iteration over 1,000 events and their occurrences", async () => {
    const tag = tagOf("many");
    const ids = new Set();
    const start = inAnHour();
    const worker = async (n) => {
      for (let i = 0; i < n; i++) {
        const ev = await q.events.create({ name: "page", start_time: start, webhook: "https://example.com/h", tags: [tag] });
        ids.add(ev.id);
      }
    };
    await Promise.all(Array.from({ length: 8 }, () => worker(125)));
    assert.equal(ids.size, 1000);

    const first = await q.events.list({ tags: [tag], limit: 100 });
    assert.equal(first.items.length, 100);
    assert.ok(first.nextCursor);

    const seen = [];
    for await (const ev of q.events.all({ tags: [tag], limit: 100 })) seen.push(ev.id);
    assert.equal(seen.length, 1000);
    assert.deepEqual(new Set(seen), ids);

    const occ = new Set();
    for await (const o of q.occurrences.all({ tags: [tag], limit: 250 })) {
      assert.ok(!occ.has(o.id), `occurrence ${o.id} listed twice`);
      occ.add(o.id);
    }
    assert.equal(occ.size, 1000);
  });

  test("occurrences: skip, unskip, move, exceptions, attempts, replay", async () => {
    const start = new Date(Math.ceil(Date.now() / 3600_000) * 3600_000 + 2 * 3600_000).toISOString(); // whole hours
    const ev = await q.events.create({ name: "hourly", start_time: start, rrule: "FREQ=HOURLY", webhook: receiver.url });
    const occs = await waitFor("planned occurrences", async () => {
      const p = await q.events.occurrences(ev.id, { status: "pending", order: "scheduled_at", limit: 3 });
      return p.items.length >= 3 && p.items;
    });
    const skipped = await q.occurrences.skip(occs[0].id, { reason: "holiday" });
    assert.equal(skipped.status, "skipped");
    assert.equal((await q.occurrences.unskip(occs[0].id)).status, "pending");
    const to = new Date(Date.parse(occs[1].scheduled_at) + 30 * 60_000);
    const moved = await q.occurrences.move(occs[1].id, { to: to.toISOString(), reason: "later" });
    assert.equal(moved.id, occs[1].id);
    assert.equal(Date.parse(moved.scheduled_at), to.getTime());
    assert.equal(Date.parse(moved.original_scheduled_at), Date.parse(occs[1].scheduled_at));

    const far = new Date(Date.parse(occs[0].scheduled_at) + 100 * 24 * 3600_000).toISOString();
    await q.events.addException(ev.id, { at: far, action: "skip", reason: "far away" });
    const isFar = (x) => x.action === "skip" && Date.parse(x.at) === Date.parse(far);
    assert.ok((await q.events.exceptions(ev.id)).some(isFar));
    await q.events.deleteException(ev.id, new Date(far));
    assert.ok(!(await q.events.exceptions(ev.id)).some(isFar));

    const n = receiver.requests.length;
    const manual = await q.events.trigger(ev.id);
    await receiver.next(n + 1);
    const done = await waitFor("the manual occurrence completes", async () => {
      const o = await q.occurrences.get(manual.id);
      return o.status === "completed" && o;
    });
    assert.equal(done.status_code, 200);
    const attempts = await q.occurrences.attempts(manual.id);
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0].status_code, 200);

    const replayed = await q.occurrences.replay(manual.id);
    assert.equal(replayed.id, manual.id);
    await waitFor("the replay's attempt", async () => (await q.occurrences.attempts(manual.id)).length === 2);
    const page = await q.occurrences.list({ event_id: ev.id, page: 1, limit: 5 });
    assert.ok(page.pagination.total >= 3);
    const bulk = await q.occurrences.replayMatching({ event_id: ev.id, status: "failed" });
    assert.equal(bulk.requeued, 0);
  });

  test("events.backfill fires the missing past instants once, calendars apply unless respect_exceptions is false, refusals are typed", async () => {
    const day = 24 * 3600_000;
    const start = new Date(Math.floor(Date.now() / day) * day + day + 9 * 3600_000); // tomorrow 09:00 UTC
    const at = (days) => new Date(start.getTime() + days * day);
    const holiday = at(-3).toISOString().slice(0, 10);
    const cal = await q.calendars.create({ name: "backfill holiday", dates: [holiday] });
    const daily = (name) => q.events.create({ name, start_time: start.toISOString(), rrule: "FREQ=DAILY", webhook: receiver.url, calendars: [{ id: cal.id, policy: "skip" }] });
    const ev = await daily("daily");

    // Dates, both ends included: -5, -4, -3 (the calendar's day, recorded skipped) and -2 days.
    const res = await q.events.backfill(ev.id, { from: at(-5), to: at(-2) });
    assert.deepEqual(
      { event_id: res.event_id, instants: res.instants, created: res.created, skipped: res.skipped, existing: res.existing },
      { event_id: ev.id, instants: 4, created: 3, skipped: 1, existing: 0 },
    );
    assert.equal(Date.parse(res.from), at(-5).getTime());
    assert.equal(Date.parse(res.to), at(-2).getTime());
    const fired = await waitFor("the backfilled occurrences complete", async () => {
      const p = await q.events.occurrences(ev.id, { order: "scheduled_at", limit: 10 });
      const mine = p.items.filter((o) => o.reason === "backfill");
      return mine.length === 3 && mine.every((o) => o.status === "completed") && mine;
    });
    assert.deepEqual(fired.map((o) => Date.parse(o.scheduled_at)), [at(-5), at(-4), at(-2)].map((d) => d.getTime()));

    // Strings; a repeat creates nothing.
    const again = await q.events.backfill(ev.id, { from: at(-5).toISOString(), to: at(-2).toISOString() });
    assert.deepEqual([again.instants, again.created, again.skipped, again.existing], [4, 0, 0, 4]);

    const all = await q.events.backfill((await daily("daily, every instant")).id, { from: at(-5), to: at(-2), respect_exceptions: false });
    assert.deepEqual([all.instants, all.created, all.skipped, all.existing], [4, 4, 0, 0]);

    let err = await q.events.backfill(ev.id, { from: at(-5), to: new Date(Date.now() + 3600_000) }).catch((e) => e);
    assert.ok(err instanceof BadRequestError && err.field === "to", String(err));
    err = await q.events.backfill(ev.id, { from: at(-2), to: at(-5) }).catch((e) => e);
    assert.ok(err instanceof BadRequestError && err.field === "from", String(err));
    const once = await q.events.create({ name: "once", start_time: inAnHour(), webhook: "https://example.com/h" });
    await assert.rejects(q.events.backfill(once.id, { from: at(-5), to: at(-2) }), (e) => e instanceof ConflictError && e.status === 409);
    await q.events.pause(ev.id);
    await assert.rejects(q.events.backfill(ev.id, { from: at(-5), to: at(-2) }), ConflictError);
    await assert.rejects(q.events.backfill("6f1c1d4e-9a0b-4c1e-8f00-000000000000", { from: at(-5), to: at(-2) }), NotFoundError);
  });

  test("a callback run: the receiver verifies, answers 202, then heartbeats and completes it with the run token alone", async () => {
    // The receiver: verifies each delivery with the kit and answers 202 at once; the work comes later.
    const secret = `run-${randomBytes(8).toString("hex")}`;
    const got = [];
    const hooks = createServer((req, res) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", async () => {
        try {
          const delivery = await verifyDelivery({ headers: req.headers, body: Buffer.concat(chunks) }, secret);
          got.push({ delivery, header: req.headers["qhronos-run-token"] });
          res.writeHead(202).end();
        } catch {
          res.writeHead(401).end();
        }
      });
    });
    await new Promise((r) => hooks.listen(0, "127.0.0.1", r));
    try {
      const ev = await q.events.create({
        name: "nightly export",
        start_time: inAnHour(),
        webhook: `http://127.0.0.1:${hooks.address().port}/jobs/export`,
        hmac_secret: secret,
        completion: "callback",
        max_runtime: "30m",
      });
      assert.equal(ev.completion, "callback");
      assert.equal(ev.max_runtime, "30m0s");

      const occ = await q.events.trigger(ev.id);
      const { delivery: d, header } = await waitFor("the callback delivery", () => got[0]);
      assert.equal(d.occurrence_id, occ.id);
      assert.ok(d.run instanceof DeliveryRun, "verifyDelivery gives the run as a DeliveryRun");
      assert.match(d.run.token, /^qrun_/);
      assert.equal(header, d.run.token, "the Qhronos-Run-Token header carries the payload's token");
      assert.equal(d.run.complete_url, `${srv.url}/occurrences/${occ.id}/complete`);
      assert.equal(d.run.heartbeat_url, `${srv.url}/occurrences/${occ.id}/heartbeat`);
      assert.ok(Math.abs(Date.parse(d.run.deadline) - (Date.now() + 30 * 60_000)) < 60_000, d.run.deadline);
      await waitFor("the accepted delivery leaves the occurrence running", async () => (await q.occurrences.get(occ.id)).status === "running");

      // A worker that holds only the run's JSON (as a queue would hand it over) and no API token.
      const run = new DeliveryRun(JSON.parse(JSON.stringify(d.run)));
      const beat = await run.heartbeat();
      assert.equal(beat.status, "running");
      assert.ok(beat.run?.heartbeat_at, JSON.stringify(beat.run));
      assert.ok(Date.parse(beat.run.deadline) >= Date.parse(d.run.deadline), "the heartbeat moves the deadline");

      const output = { rows: 42, file: "export-2026-12-01.csv" };
      const done = await run.complete("succeeded", output);
      assert.equal(done.status, "completed");
      assert.equal(done.run?.status, "succeeded");
      assert.deepEqual(done.run?.output, output);
      const stored = await q.occurrences.get(occ.id);
      assert.equal(stored.status, "completed");
      assert.deepEqual(stored.run?.output, output);
      assert.equal(typeof stored.run?.duration_ms, "number");

      assert.equal((await d.run.complete("succeeded", output)).status, "completed", "the same report again answers the same");
      await assert.rejects(d.run.complete("failed"), (e) => e instanceof ConflictError && e.status === 409);
      await assert.rejects(d.run.heartbeat(), ConflictError);
    } finally {
      await new Promise((r) => hooks.close(r));
    }
  });

  test("occurrences.complete and heartbeat with an API token; another occurrence's run token is refused", async () => {
    const secret = `run-${randomBytes(8).toString("hex")}`;
    const got = [];
    const hooks = createServer((req, res) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", async () => {
        try {
          got.push(await verifyDelivery({ headers: req.headers, body: Buffer.concat(chunks) }, secret));
          res.writeHead(202).end();
        } catch {
          res.writeHead(401).end();
        }
      });
    });
    await new Promise((r) => hooks.listen(0, "127.0.0.1", r));
    try {
      const ev = await q.events.create({
        name: "invoice run",
        start_time: inAnHour(),
        webhook: `http://127.0.0.1:${hooks.address().port}/jobs/invoices`,
        hmac_secret: secret,
        completion: "callback",
      });
      assert.equal(ev.max_runtime, "1h0m0s", "the default max_runtime");
      const first = await q.events.trigger(ev.id);
      await waitFor("the first delivery", () => got.length >= 1);
      const second = await q.events.trigger(ev.id);
      await waitFor("the second delivery", () => got.length >= 2);
      for (const o of [first, second]) {
        await waitFor(`occurrence ${o.id} running`, async () => (await q.occurrences.get(o.id)).status === "running");
      }
      const firstRun = got.find((d) => d.occurrence_id === first.id).run;

      const beat = await q.occurrences.heartbeat(second.id);
      assert.equal(beat.status, "running");
      assert.ok(beat.run?.heartbeat_at);
      const stranger = new Qhronos({ baseUrl: srv.url, token: firstRun.token, retries: 0 });
      await assert.rejects(stranger.occurrences.complete(second.id, { status: "succeeded" }), UnauthorizedError);
      const failed = await q.occurrences.complete(second.id, { status: "failed", output: { error: "ledger locked" } });
      assert.equal(failed.status, "failed");
      assert.deepEqual(failed.run?.output, { error: "ledger locked" });
      await assert.rejects(q.occurrences.heartbeat(second.id), ConflictError);

      // The run token as a client's token completes its own occurrence.
      const own = new Qhronos({ baseUrl: srv.url, token: firstRun.token });
      assert.equal((await own.occurrences.complete(first.id, { status: "succeeded" })).status, "completed");

      const plain = await q.events.update(ev.id, { completion: "response" });
      assert.equal(plain.completion, "response");
      assert.equal(plain.max_runtime, null, "max_runtime goes with callback");
      const refused = await q.events.create({ name: "bad", start_time: inAnHour(), webhook: "https://example.com/h", max_runtime: "10m" }).catch((e) => e);
      assert.ok(refused instanceof BadRequestError && refused.field === "max_runtime", String(refused));
    } finally {
      await new Promise((r) => hooks.close(r));
    }
  });

  test("concurrency keys: events share a key, a key shows its runs in flight and waiting, pause holds them, resume lets them go", async () => {
    // Callback runs hold their slot until completed, so what is in flight is the test's to decide.
    const secret = `conc-${randomBytes(8).toString("hex")}`;
    const got = [];
    const hooks = createServer((req, res) => {
      const chunks = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", async () => {
        try {
          got.push(await verifyDelivery({ headers: req.headers, body: Buffer.concat(chunks) }, secret));
          res.writeHead(202).end();
        } catch {
          res.writeHead(401).end();
        }
      });
    });
    await new Promise((r) => hooks.listen(0, "127.0.0.1", r));
    try {
      const key = `tenant:${randomBytes(4).toString("hex")}@sdk-ts`; // ':' and '@' travel escaped in the path
      const concurrency = { key, limit: 1 };
      const job = (name) =>
        q.events.create({
          name,
          start_time: inAnHour(),
          webhook: `http://127.0.0.1:${hooks.address().port}/jobs/sync`,
          hmac_secret: secret,
          completion: "callback",
          concurrency,
        });
      const a = await job("sync a");
      const b = await job("sync b");
      assert.deepEqual(a.concurrency, concurrency);
      assert.deepEqual(await q.concurrencyKeys.get(key), { key, limit: 1, in_flight: 0, waiting: 0, paused: false, paused_at: null, paused_by: null });

      const first = await q.events.trigger(a.id);
      await waitFor("the first run", async () => (await q.occurrences.get(first.id)).status === "running");
      const second = await q.events.trigger(b.id);
      const busy = await waitFor("the second waits for the key's slot", async () => {
        const k = await q.concurrencyKeys.get(key);
        return k.waiting === 1 && k;
      });
      assert.equal(busy.in_flight, 1);
      const held = await q.occurrences.get(second.id);
      assert.deepEqual([held.status, held.reason], ["pending", "concurrency_wait"]);

      const paused = await q.concurrencyKeys.pause(key);
      assert.equal(paused.paused, true);
      assert.ok(paused.paused_at && paused.paused_by, JSON.stringify(paused));
      assert.equal((await q.concurrencyKeys.pause(key)).paused, true, "pausing again answers the same");
      await q.occurrences.complete(first.id, { status: "succeeded" });
      await waitFor("the first run's slot is freed", async () => (await q.concurrencyKeys.get(key)).in_flight === 0);
      await new Promise((r) => setTimeout(r, 1000)); // a second in which nothing of a paused key may start
      assert.equal(got.length, 1, "no run starts while the key is paused");
      assert.equal((await q.concurrencyKeys.get(key)).waiting, 1);

      const resumed = await q.concurrencyKeys.resume(key);
      assert.deepEqual([resumed.paused, resumed.paused_at, resumed.paused_by], [false, null, null]);
      await waitFor("the second run after the resume", () => got.length >= 2);
      assert.equal(got[1].occurrence_id, second.id);
      await waitFor("the second run holds the slot", async () => {
        const k = await q.concurrencyKeys.get(key);
        return k.in_flight === 1 && k.waiting === 0;
      });
      await q.occurrences.complete(second.id, { status: "succeeded" });
      await waitFor("every slot is freed", async () => (await q.concurrencyKeys.get(key)).in_flight === 0);

      // Pages of one key: the cursor walks every key once.
      const other = `${key}.b`;
      const c = await q.events.create({ name: "other", start_time: inAnHour(), webhook: "https://example.com/h", concurrency: { key: other, limit: 3 } });
      const page = await q.concurrencyKeys.list({ limit: 1 });
      assert.equal(page.items.length, 1);
      assert.ok(page.nextCursor, "a next cursor while more keys follow");
      const seen = [];
      for await (const k of q.concurrencyKeys.all({ limit: 1 })) seen.push(k);
      assert.equal(new Set(seen.map((k) => k.key)).size, seen.length, "no key listed twice");
      assert.deepEqual(seen.find((k) => k.key === other), { key: other, limit: 3, in_flight: 0, waiting: 0, paused: false, paused_at: null, paused_by: null });
      assert.ok(seen.some((k) => k.key === key));

      // null removes it; a key no event names is gone.
      assert.equal((await q.events.update(c.id, { concurrency: null })).concurrency ?? null, null);
      await assert.rejects(q.concurrencyKeys.get(other), NotFoundError);
      await assert.rejects(q.concurrencyKeys.pause(other), NotFoundError);
      const refused = await q.events.create({ name: "bad", start_time: inAnHour(), webhook: "https://example.com/h", concurrency: { key: "customer 42", limit: 2 } }).catch((e) => e);
      assert.ok(refused instanceof BadRequestError && refused.field === "concurrency.key", String(refused));
    } finally {
      await new Promise((r) => hooks.close(r));
    }
  });

  test("a real signed delivery is verified; a wrong secret, a replay outside the tolerance and a tampered body are refused", async () => {
    const secret = `plain-${randomBytes(8).toString("hex")}`;
    const ev = await q.events.create({ name: "signed", start_time: inAnHour(), webhook: receiver.url, hmac_secret: secret });
    const n = receiver.requests.length;
    const occ = await q.events.trigger(ev.id);
    const req = await receiver.next(n + 1);

    const d = await verifyDelivery({ headers: req.headers, body: req.body }, secret);
    assert.equal(d.occurrence_id, occ.id);
    assert.equal(d.event_id, ev.id);
    assert.equal(d.name, "signed");
    // a fetch Request, as frameworks on fetch (Hono, Next, Deno, Bun) hand it
    const asRequest = new Request("http://127.0.0.1/hook", { method: "POST", headers: req.headers, body: req.body });
    assert.equal((await verifyDelivery(asRequest, secret)).occurrence_id, occ.id);

    await assert.rejects(verifyDelivery({ headers: req.headers, body: req.body }, "wrong-secret"), WebhookVerificationError);
    const tampered = Buffer.from(req.body.toString().replace('"signed"', '"forged"'));
    await assert.rejects(verifyDelivery({ headers: req.headers, body: tampered }, secret), WebhookVerificationError);

    // The same request six minutes later (a replay): the timestamp is
    // outside the five-minute tolerance of the receiver's clock.
    const realNow = Date.now;
    Date.now = () => realNow() + 6 * 60_000;
    try {
      await assert.rejects(verifyDelivery({ headers: req.headers, body: req.body }, secret), /too old/);
    } finally {
      Date.now = realNow;
    }

    // X-Qhronos-Signature alone (original senders) only when asked for.
    const legacyOnly = { "x-qhronos-signature": req.headers["x-qhronos-signature"] };
    await assert.rejects(verifyDelivery({ headers: legacyOnly, body: req.body }, secret), WebhookVerificationError);
    assert.equal((await verifyDelivery({ headers: legacyOnly, body: req.body }, secret, { legacy: true })).occurrence_id, occ.id);
    await assert.rejects(verifyDelivery({ headers: legacyOnly, body: req.body }, "wrong", { legacy: true }), WebhookVerificationError);
  });

  test("secret rotation: either secret verifies during the grace, old receivers keep X-Qhronos-Signature", async () => {
    const old = `old-${randomBytes(8).toString("hex")}`;
    const ev = await q.events.create({ name: "rotating", start_time: inAnHour(), webhook: receiver.url, hmac_secret: old });
    const rotation = await q.events.rotateSecret(ev.id, { grace: "1h" });
    assert.ok(rotation.hmac_secret && rotation.hmac_secret !== old);
    assert.ok(rotation.previous_secret_expires_at);
    const n = receiver.requests.length;
    await q.events.trigger(ev.id);
    const req = await receiver.next(n + 1);
    const got = { headers: req.headers, body: req.body };
    await verifyDelivery(got, rotation.hmac_secret);
    await verifyDelivery(got, old);
    await verifyDelivery(got, ["unrelated", rotation.hmac_secret]);
    await assert.rejects(verifyDelivery(got, "unrelated"), WebhookVerificationError);
    const legacy = {
      "x-qhronos-signature": req.headers["x-qhronos-signature"],
      "x-qhronos-signature-new": req.headers["x-qhronos-signature-new"],
    };
    await verifyDelivery({ headers: legacy, body: req.body }, old, { legacy: true });
    await verifyDelivery({ headers: legacy, body: req.body }, rotation.hmac_secret, { legacy: true });
  });

  test("endpoints: create, list, get, update, disable, enable, rotate, deliver with a whsec_ secret, delete", async () => {
    const tag = tagOf("ep");
    const ep = await q.endpoints.create({ name: "billing", url: receiver.url, tags: [tag] });
    assert.ok(ep.secret, "the secret is shown on create");
    assert.deepEqual((await q.endpoints.list({ tags: [tag] })).items.map((e) => e.id), [ep.id]);
    const all = [];
    for await (const e of q.endpoints.all({ tags: [tag] })) all.push(e.id);
    assert.deepEqual(all, [ep.id]);
    assert.equal((await q.endpoints.get(ep.id)).name, "billing");
    assert.equal((await q.endpoints.update(ep.id, { description: "invoices" })).description, "invoices");
    assert.equal((await q.endpoints.disable(ep.id)).state, "disabled");
    assert.equal((await q.endpoints.enable(ep.id)).state, "healthy");

    const ev = await q.events.create({
      name: "via endpoint",
      start_time: inAnHour(),
      action: { type: "webhook", params: { endpoint_id: ep.id } },
    });
    const n = receiver.requests.length;
    await q.events.trigger(ev.id);
    const req = await receiver.next(n + 1);
    assert.equal((await verifyDelivery({ headers: req.headers, body: req.body }, ep.secret)).event_id, ev.id);

    const rotated = await q.endpoints.rotateSecret(ep.id, { grace: "1h" });
    assert.ok(rotated.secret && rotated.secret !== ep.secret);
    await assert.rejects(q.endpoints.delete(ep.id), ConflictError);
    await q.events.delete(ev.id);
  });

  test("portal links: a link for a tag signs in once; its token sees that tag's endpoints and no events", async () => {
    const tag = tagOf("customer");
    const mine = await q.endpoints.create({ name: "mine", url: receiver.url, tags: [tag] });
    await q.endpoints.create({ name: "theirs", url: receiver.url, tags: [tagOf("customer")] });
    const link = await q.portalLinks.create({ tags: [tag], expires_in: "15m", return_url: "https://app.example.com/back" });
    assert.ok(link.url.startsWith(`${srv.url}/portal/login?code=`), link.url);
    const code = new URL(link.url).searchParams.get("code");
    const anonymous = new Qhronos({ baseUrl: srv.url });
    const session = await anonymous.portalLinks.redeem(code);
    assert.deepEqual(session.tags, [tag]);
    assert.equal(session.return_url, "https://app.example.com/back");
    assert.equal(session.expires_at, link.expires_at);
    await assert.rejects(anonymous.portalLinks.redeem(code), NotFoundError);

    const portal = new Qhronos({ baseUrl: srv.url, token: session.token });
    assert.deepEqual((await portal.endpoints.list()).items.map((e) => e.id), [mine.id]);
    await assert.rejects(portal.events.list(), ForbiddenError);
    await assert.rejects(portal.portalLinks.create({ tags: [tag] }), ForbiddenError);
  });

  test("topics and subscriptions: create, list, all, get, update with If-Match, raw members, pause, resume, delete", async () => {
    const sfx = randomBytes(4).toString("hex");
    const name = `billing-${sfx}.invoice.paid`;
    const etagOf = async (path) => (await q.send({ method: "GET", path })).headers.get("ETag");

    // Topics: the catalogue, in name order; admins write it, every token reads it.
    const schema = { type: "object", properties: { amount: { type: "number" } }, required: ["amount"] };
    const topic = await q.topics.create({ name, description: "an invoice was paid", schema });
    assert.deepEqual([topic.name, topic.description, topic.schema, topic.version], [name, "an invoice was paid", schema, 1]);
    await assert.rejects(q.topics.create({ name }), (e) => e instanceof ConflictError && e.status === 409);
    const bad = await q.topics.create({ name: "Not A Name" }).catch((e) => e);
    assert.ok(bad instanceof BadRequestError && bad.field === "name", String(bad));
    assert.deepEqual(await q.topics.get(name), topic);
    const other = await q.topics.create({ name: `billing-${sfx}.invoice.void` });
    assert.equal(other.schema, null);
    const page = await q.topics.list({ limit: 1 });
    assert.equal(page.items.length, 1);
    assert.ok(page.nextCursor, "a next cursor while more topics follow");
    const names = [];
    for await (const t of q.topics.all({ limit: 1 })) names.push(t.name);
    assert.equal(new Set(names).size, names.length, "no topic listed twice");
    assert.deepEqual([...names].sort(), names, "in name order");
    assert.deepEqual(names.filter((n) => n.startsWith(`billing-${sfx}.`)), [name, other.name]);

    const etag = await etagOf(`/topics/${name}`);
    assert.ok(etag);
    const described = await q.topics.update(name, { description: "paid" }, { ifMatch: etag });
    assert.deepEqual([described.description, described.schema, described.version], ["paid", schema, 2]);
    await assert.rejects(q.topics.update(name, { description: "stale" }, { ifMatch: etag }), PreconditionFailedError);
    assert.equal((await q.topics.update(name, { schema: null })).schema, null, "null removes the schema");
    const minted = await q.tokens.create({ sub: "sdk-ts-topics", access: "read", expires_at: inAnHour() });
    const reader = new Qhronos({ baseUrl: srv.url, token: minted.token, retries: 10 });
    assert.equal((await reader.topics.get(name)).name, name);
    await assert.rejects(reader.topics.create({ name: `billing-${sfx}.reader` }), (e) => e instanceof APIError && e.status === 403);

    // Subscriptions: an endpoint subscribed to a topic or a pattern, with a CEL filter.
    const tag = tagOf("sub");
    const ep = await q.endpoints.create({ name: "invoices", url: receiver.url, tags: [tag] });
    const sub = await q.subscriptions.create({ topic: name, endpoint_id: ep.id, filter: "metadata.amount > 100", description: "big ones", tags: [tag] });
    assert.match(sub.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      [sub.topic, sub.endpoint_id, sub.filter, sub.description, sub.tags, sub.paused, sub.version],
      [name, ep.id, "metadata.amount > 100", "big ones", [tag], false, 1],
    );
    const wide = await q.subscriptions.create({ topic: `billing-${sfx}.*`, endpoint_id: ep.id, tags: [tag], paused: true });
    assert.deepEqual([wide.filter, wide.paused], [null, true]);
    let err = await q.subscriptions.create({ topic: `billing-${sfx}.nothing`, endpoint_id: ep.id }).catch((e) => e);
    assert.ok(err instanceof BadRequestError && err.field === "topic", String(err));
    err = await q.subscriptions.create({ topic: name, endpoint_id: ep.id, filter: "metadata.amount >" }).catch((e) => e);
    assert.ok(err instanceof BadRequestError && err.field === "filter", String(err));

    assert.deepEqual(await q.subscriptions.get(sub.id), sub);
    assert.deepEqual((await q.subscriptions.list({ tags: [tag] })).items.map((s) => s.id), [wide.id, sub.id], "newest first");
    assert.deepEqual((await q.subscriptions.list({ topic: name })).items.map((s) => s.id), [sub.id], "the topic as written");
    assert.deepEqual((await q.subscriptions.list({ endpoint_id: ep.id, paused: true })).items.map((s) => s.id), [wide.id]);
    const first = await q.subscriptions.list({ tags: [tag], limit: 1 });
    assert.deepEqual([first.items.length, !!first.nextCursor], [1, true]);
    const walked = [];
    for await (const s of q.subscriptions.all({ tags: tag, limit: 1 })) walked.push(s.id);
    assert.deepEqual(walked, [wide.id, sub.id]);

    const subTag = await etagOf(`/subscriptions/${sub.id}`);
    const changed = await q.subscriptions.update(sub.id, { filter: "metadata.amount > 1000" }, { ifMatch: subTag });
    assert.deepEqual([changed.filter, changed.description, changed.version], ["metadata.amount > 1000", "big ones", 2]);
    await assert.rejects(q.subscriptions.update(sub.id, { description: "stale" }, { ifMatch: subTag }), PreconditionFailedError);
    const cleared = await q.subscriptions.update(sub.id, { filter: null, description: null });
    assert.deepEqual([cleared.filter, cleared.description], [null, ""], "null clears the filter and the description");
    const paused = await q.subscriptions.pause(sub.id);
    assert.equal(paused.paused, true);
    assert.equal((await q.subscriptions.pause(sub.id)).paused, true, "pausing again answers the same");
    assert.equal((await q.subscriptions.resume(sub.id)).paused, false);
    assert.equal((await q.subscriptions.resume(wide.id)).paused, false);

    // What a subscription names cannot go first.
    await assert.rejects(q.topics.delete(name), (e) => e instanceof ConflictError && e.status === 409);
    await assert.rejects(q.endpoints.delete(ep.id), ConflictError);
    await q.subscriptions.delete(sub.id, { ifMatch: await etagOf(`/subscriptions/${sub.id}`) });
    await q.subscriptions.delete(wide.id);
    await assert.rejects(q.subscriptions.get(sub.id), NotFoundError);
    await q.topics.delete(name, { ifMatch: await etagOf(`/topics/${name}`) });
    await q.topics.delete(other.name);
    await assert.rejects(q.topics.get(name), NotFoundError);
    await q.endpoints.delete(ep.id);
  });

  test("fan-out: an event with a topic, its deliveries page by page, one subscription's replay, a subscription's attempts", async () => {
    const topic = `digest-${randomBytes(4).toString("hex")}.daily`;
    await q.topics.create({ name: topic, schema: { type: "object", required: ["region"], properties: { region: { type: "string" } } } });
    let failing = true;
    const ok = await startReceiver();
    const flaky = await startReceiver(() => (failing ? 503 : 200));
    try {
      const epOk = await q.endpoints.create({ name: "ok", url: ok.url });
      const epFlaky = await q.endpoints.create({ name: "flaky", url: flaky.url });
      const subOk = await q.subscriptions.create({ topic, endpoint_id: epOk.id });
      const subUs = await q.subscriptions.create({ topic, endpoint_id: epOk.id, filter: 'metadata.region == "us"' });
      const subFlaky = await q.subscriptions.create({ topic, endpoint_id: epFlaky.id });

      let err = await q.events.create({ name: "digest", start_time: "in 1 hour", topic: `${topic}x` }).catch((e) => e);
      assert.ok(err instanceof BadRequestError && err.field === "topic", String(err));
      err = await q.events.create({ name: "digest", start_time: "in 1 hour", topic, metadata: { region: 7 } }).catch((e) => e);
      assert.ok(err instanceof BadRequestError && err.field === "metadata", String(err));
      const ev = await q.events.create({ name: "digest", start_time: "in 1 hour", topic, metadata: { region: "eu" }, retry: { max_attempts: 1 } });
      assert.equal(ev.topic, topic);
      assert.deepEqual(ev.action, { type: "topic", params: { topic } });

      const fired = await q.events.trigger(ev.id);
      const failed = await waitFor("the fan-out ends", async () => {
        const o = await q.occurrences.get(fired.id);
        return o.status === "failed" && o;
      });
      assert.deepEqual(failed.fanout, { subscriptions: 3, delivered: 1, failed: 1, filtered: 1, pending: 0 });

      const first = await q.occurrences.deliveries(fired.id, { limit: 2 });
      assert.deepEqual([first.items.length, !!first.nextCursor], [2, true]);
      const all = [];
      for await (const d of q.occurrences.allDeliveries(fired.id, { limit: 1 })) all.push(d);
      assert.deepEqual(all.map((d) => d.subscription_id), [subOk.id, subUs.id, subFlaky.id].sort(), "each once, in subscription id order");
      const byId = Object.fromEntries(all.map((d) => [d.subscription_id, d]));
      assert.deepEqual([byId[subOk.id].status, byId[subOk.id].endpoint_id, byId[subOk.id].attempts.map((a) => a.status_code)], ["delivered", epOk.id, [200]]);
      assert.deepEqual([byId[subUs.id].status, byId[subUs.id].attempts], ["filtered", []]);
      assert.equal(byId[subFlaky.id].status, "failed");
      assert.match(byId[subFlaky.id].error, /503/);
      assert.equal(byId[subFlaky.id].attempts[0].subscription_id, subFlaky.id);

      // The receiver is back: its delivery alone goes again.
      failing = false;
      err = await q.occurrences.replayDelivery(fired.id, subUs.id).catch((e) => e);
      assert.ok(err instanceof BadRequestError && err.field === "subscription_id", String(err));
      const replayed = await q.occurrences.replayDelivery(fired.id, subFlaky.id);
      assert.equal(replayed.id, fired.id);
      await waitFor("the replay is delivered", async () => (await q.occurrences.get(fired.id)).status === "completed");
      assert.deepEqual([ok.requests.length, flaky.requests.length], [1, 2], "the other subscriptions are not sent again");

      const attempts = await q.subscriptions.deliveries(subFlaky.id);
      assert.deepEqual(attempts.items.map((a) => [a.outcome, a.status_code, a.occurrence_id]), [["completed", 200, fired.id], ["failed", 503, fired.id]], "newest first");
      const walked = [];
      for await (const a of q.subscriptions.allDeliveries(subFlaky.id, { limit: 1 })) walked.push(a.id);
      assert.deepEqual(walked, attempts.items.map((a) => a.id));
      assert.deepEqual((await q.subscriptions.deliveries(subUs.id)).items, [], "a filtered subscription was sent nothing");
      await assert.rejects(q.subscriptions.deliveries("00000000-0000-4000-8000-000000000000"), NotFoundError);
    } finally {
      await ok.close();
      await flaky.close();
    }
  });

  test("calendars: create, list, get, update, delete", async () => {
    const tag = tagOf("cal");
    const cal = await q.calendars.create({ name: "holidays", dates: ["2031-12-25"], tags: [tag] });
    const listed = [];
    for await (const c of q.calendars.all({ tags: [tag] })) listed.push(c.id);
    assert.deepEqual(listed, [cal.id]);
    assert.deepEqual((await q.calendars.list({ tags: [tag] })).items.map((c) => c.id), [cal.id]);
    assert.equal((await q.calendars.get(cal.id)).name, "holidays");
    const upd = await q.calendars.update(cal.id, { name: "holidays", dates: ["2031-12-25", "2031-12-26"], tags: [tag] });
    assert.equal(upd.dates.length, 2);
    await q.calendars.delete(cal.id);
    await assert.rejects(q.calendars.get(cal.id), NotFoundError);
  });

  test("tokens, notification channels, system routes", async () => {
    const t = await q.tokens.create({ sub: "sdk-ts-tok", access: "read", expires_at: inAnHour() });
    assert.ok((await q.tokens.list()).some((x) => x.id === t.id));
    await q.tokens.revoke(t.id);
    await assert.rejects(new Qhronos({ baseUrl: srv.url, token: t.token }).events.list(), UnauthorizedError);

    const ch = await q.notificationChannels.create({ name: `ops-${randomBytes(3).toString("hex")}`, type: "webhook", url: receiver.url });
    assert.ok((await q.notificationChannels.list()).some((c) => c.id === ch.id));
    assert.equal((await q.notificationChannels.get(ch.id)).id, ch.id);
    assert.deepEqual((await q.notificationChannels.update(ch.id, { kinds: ["delivery_failed"] })).kinds, ["delivery_failed"]);
    const result = await q.notificationChannels.test(ch.id);
    assert.equal(result.delivered, true, JSON.stringify(result));
    await q.notificationChannels.delete(ch.id);
    await assert.rejects(q.notificationChannels.get(ch.id), NotFoundError);

    assert.equal((await q.health()).status, "ok");
    assert.equal((await q.healthz()).status, "ok");
    assert.equal((await q.ready()).status, "ok");
    const status = await q.status();
    assert.ok(status.version);
    assert.equal(status.backends.database, srv.backend, "the backend the run asked for");
    if (process.env.QHRONOS_SDK_REDIS_URL) assert.equal(status.backends.coordination, "redis");
    assert.equal(typeof (await q.stats()).total, "object");
    assert.ok(Array.isArray((await q.statsTimeline({ step: "1h" })).buckets));
    const report = await q.punctuality({ group_by: "tag" });
    assert.equal(report.group_by, "tag");
    assert.ok(Array.isArray(report.groups));
    assert.match(await q.metrics(), /qhronos_/);
    const doc = JSON.parse(readFileSync(`${repoRoot}/internal/api/openapi.json`, "utf8"));
    assert.deepEqual(await q.openapi(), doc, "the served document is the one the types come from");
  });

  test("websocket: a client-hook receives a signed frame and acks it", { skip: !globalThis.WebSocket && "no WebSocket" }, async () => {
    const client = `sdk-${randomBytes(3).toString("hex")}`;
    const secret = `ws-${randomBytes(8).toString("hex")}`;
    const ev = await q.events.create({
      name: "pushed",
      start_time: inAnHour(),
      action: { type: "websocket", params: { client_name: client, require_ack: true } },
      hmac_secret: secret,
    });
    const conn = await q.subscribe({ clientName: client });
    try {
      const occ = await q.events.trigger(ev.id);
      for await (const f of conn) {
        if (f.type !== "event") continue;
        assert.equal(f.occurrence_id, occ.id);
        assert.equal((await verifyDelivery(f.webhook, secret)).occurrence_id, occ.id);
        conn.ack(f.event_id, f.occurrence_id);
        break;
      }
      await waitFor("the acked occurrence completes", async () => (await q.occurrences.get(occ.id)).status === "completed");
    } finally {
      conn.close();
    }
  });
});
