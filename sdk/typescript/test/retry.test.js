// What is retried and what is not, against a scripted server: a lost answer
// to a create is retried with the same Idempotency-Key; 503 is retried for
// idempotent calls only; a Retry-After longer than maxWaitMs is thrown.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { DeliveryRun, Qhronos, RateLimitError, UnavailableError } from "../dist/index.js";

/** scripted answers each request with the next step: a status, or "drop"
 * (the connection is cut before any answer). */
async function scripted(steps) {
  const seen = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      seen.push({
        method: req.method,
        url: req.url,
        key: req.headers["idempotency-key"],
        auth: req.headers.authorization,
        body: Buffer.concat(chunks).toString(),
      });
      const step = steps.shift() ?? { status: 200 };
      if (step === "drop") return req.socket.destroy();
      res.writeHead(step.status, { "Content-Type": "application/json", ...(step.headers ?? {}) });
      res.end(step.body ?? (step.status < 300 ? '{"id":"e1"}' : '{"error":"nope"}'));
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const q = new Qhronos({ baseUrl: `http://127.0.0.1:${server.address().port}`, token: "t", backoffMs: 5 });
  const base = `http://127.0.0.1:${server.address().port}`;
  return { q, base, seen, close: () => new Promise((r) => server.close(r)) };
}

test("a create whose answer is lost is sent again with the same Idempotency-Key", async () => {
  const s = await scripted(["drop", { status: 201 }]);
  try {
    const ev = await s.q.events.create({ name: "n", start_time: "in 1 hour" });
    assert.equal(ev.id, "e1");
    assert.equal(s.seen.length, 2);
    assert.match(s.seen[0].key, /^qhronos-ts-[0-9a-f]{32}$/);
    assert.equal(s.seen[1].key, s.seen[0].key);
  } finally {
    await s.close();
  }
});

test("a POST without a key is not retried after a lost answer or a 503; a GET is", async () => {
  const s = await scripted(["drop", { status: 503 }, { status: 503 }, { status: 200, body: "[]" }]);
  try {
    await assert.rejects(s.q.occurrences.replay("o1"), (e) => e.name === "TypeError"); // fetch failed
    await assert.rejects(s.q.occurrences.replay("o1"), UnavailableError);
    assert.deepEqual((await s.q.events.list()).items, []);
    assert.equal(s.seen.length, 4, "one attempt per POST, two for the GET");
  } finally {
    await s.close();
  }
});

test("a backfill, which a repeat leaves as it was, is retried on 503 and sends its Dates as RFC 3339", async () => {
  const s = await scripted([{ status: 503 }, { status: 202, body: '{"event_id":"e1","instants":2,"created":0,"skipped":0,"existing":2}' }]);
  try {
    const res = await s.q.events.backfill("e1", { from: new Date("2020-01-02T09:00:00Z"), to: "7 days ago", respect_exceptions: false });
    assert.equal(res.existing, 2);
    assert.equal(s.seen.length, 2, "one retry after the 503");
    assert.equal(s.seen[1].url, "/events/e1/backfill");
    assert.equal(s.seen[1].key, undefined, "the route takes no Idempotency-Key");
    assert.deepEqual(JSON.parse(s.seen[1].body), { from: "2020-01-02T09:00:00.000Z", to: "7 days ago", respect_exceptions: false });
  } finally {
    await s.close();
  }
});

test("a run's complete, which a repeat answers the same, is retried on 503 with the run token as its bearer; a heartbeat has no body", async () => {
  const s = await scripted([{ status: 503 }, { status: 200, body: '{"id":"o1","status":"completed"}' }, { status: 200, body: '{"id":"o1","status":"running"}' }]);
  try {
    const run = new DeliveryRun(
      { token: "qrun_abc", complete_url: `${s.base}/occurrences/o1/complete`, heartbeat_url: `${s.base}/occurrences/o1/heartbeat`, deadline: "2030-01-01T00:00:00Z" },
      { backoffMs: 5 },
    );
    assert.equal((await run.complete("succeeded", { rows: 3 })).status, "completed");
    assert.equal(s.seen.length, 2, "one retry after the 503");
    assert.deepEqual(
      { method: s.seen[1].method, url: s.seen[1].url, auth: s.seen[1].auth, key: s.seen[1].key },
      { method: "POST", url: "/occurrences/o1/complete", auth: "Bearer qrun_abc", key: undefined },
    );
    assert.deepEqual(JSON.parse(s.seen[1].body), { status: "succeeded", output: { rows: 3 } });
    assert.equal((await run.heartbeat()).status, "running");
    assert.deepEqual([s.seen[2].url, s.seen[2].auth, s.seen[2].body], ["/occurrences/o1/heartbeat", "Bearer qrun_abc", ""]);
  } finally {
    await s.close();
  }
});

test("429 is retried after Retry-After whatever the method; a longer wait than maxWaitMs is thrown", async () => {
  const s = await scripted([{ status: 429, headers: { "Retry-After": "1" } }, { status: 200 }, { status: 429, headers: { "Retry-After": "120" } }]);
  try {
    const t0 = Date.now();
    await s.q.occurrences.replay("o1");
    assert.ok(Date.now() - t0 >= 900, "waited for Retry-After");
    const err = await s.q.occurrences.replay("o1").catch((e) => e);
    assert.ok(err instanceof RateLimitError && err.retryAfter === 120, String(err));
    assert.equal(s.seen.length, 3);
  } finally {
    await s.close();
  }
});
