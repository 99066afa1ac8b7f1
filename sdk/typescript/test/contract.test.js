// The client agrees with internal/api/openapi.json: the generated types are
// what the pinned generator makes of the document today, every operation of
// the document is called by some method, and every request the client sends
// names a route, parameters and a body the document has. A route added to the
// document without a method here, or a stale src/openapi.ts, fails.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { DeliveryRun, Qhronos } from "../dist/index.js";
import { repoRoot } from "./harness.js";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const documentPath = join(repoRoot, "internal", "api", "openapi.json");
const doc = JSON.parse(readFileSync(documentPath, "utf8"));
const methods = ["get", "post", "put", "patch", "delete"];

test("src/openapi.ts is what `npm run generate` makes of openapi.json", () => {
  const dir = mkdtempSync(join(tmpdir(), "qhronos-gen-"));
  try {
    const out = join(dir, "openapi.ts");
    execFileSync(join(pkg, "node_modules", ".bin", "openapi-typescript"), [documentPath, "-o", out], { stdio: "pipe" });
    const want = readFileSync(out, "utf8");
    const got = readFileSync(join(pkg, "src", "openapi.ts"), "utf8");
    assert.ok(got === want, "src/openapi.ts is stale: run `npm run generate` in sdk/typescript (or `sdk/generate.sh`)");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** routes of the document: template regexes, longest literal first. */
const routes = Object.entries(doc.paths).flatMap(([path, item]) =>
  methods
    .filter((m) => item[m])
    .map((m) => {
      const op = item[m];
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const re = new RegExp("^" + path.replace(/\{[^}]+\}/g, "[^/]+") + "$");
      return { key: `${m.toUpperCase()} ${path}`, method: m.toUpperCase(), path, re, op, params, literal: path.replace(/\{[^}]+\}/g, "").length };
    }),
).sort((a, b) => b.literal - a.literal);

function answerFor(op) {
  const code = Object.keys(op.responses).filter((c) => c.startsWith("2")).sort()[0] ?? "200";
  const content = op.responses[code]?.content ?? {};
  if (content["text/plain"]) return [Number(code), "text"];
  const schema = content["application/json"]?.schema;
  const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema;
  return [Number(code), resolved?.type === "array" ? "[]" : "{}"];
}

test("every operation of openapi.json is called by a method, with a request the document allows", async () => {
  const hit = new Set();
  const problems = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url, "http://x");
      const route = routes.find((r) => r.method === req.method && r.re.test(url.pathname));
      if (!route) {
        problems.push(`${req.method} ${url.pathname} is not in the document`);
        res.statusCode = 404;
        return res.end("{}");
      }
      hit.add(route.key);
      const allowed = new Set(route.params.filter((p) => p.in === "query").map((p) => p.name));
      for (const name of url.searchParams.keys()) {
        if (!allowed.has(name)) problems.push(`${route.key}: query parameter ${name} is not in the document`);
      }
      const headers = new Set(route.params.filter((p) => p.in === "header").map((p) => p.name.toLowerCase()));
      for (const h of ["idempotency-key", "if-match", "x-qhronos-via"]) {
        if (req.headers[h] && !headers.has(h)) problems.push(`${route.key}: header ${h} is not in the document`);
      }
      const body = Buffer.concat(chunks).toString();
      if (body && !route.op.requestBody) problems.push(`${route.key}: sends a body the document does not take`);
      if (!body && route.op.requestBody?.required) problems.push(`${route.key}: the document requires a body`);
      const [code, text] = answerFor(route.op);
      res.statusCode = code;
      res.end(code === 204 ? undefined : text);
    });
  });
  server.on("upgrade", (req, socket) => {
    if (req.url === "/ws") hit.add("GET /ws");
    socket.destroy();
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const q = new Qhronos({ baseUrl: `http://127.0.0.1:${server.address().port}`, token: "t", retries: 0 });
  const id = "0b7f6a43-2a35-4d43-9a47-51cbbd1d6d83";
  const soon = new Date(Date.now() + 3600_000).toISOString();
  try {
    await q.health();
    await q.healthz();
    await q.ready();
    await q.status();
    await q.openapi();
    await q.metrics();
    await q.stats({ since: soon, by_action: true });
    await q.statsTimeline({ since: soon, step: "1h" });
    await q.punctuality({ group_by: "tag", tag: ["a", "b"], tolerance: "250ms" });
    if (globalThis.WebSocket) await q.subscribe({ clientName: "acme" }).catch(() => {});
    else hit.add("GET /ws"); // covered where the runtime has a WebSocket (npm test passes the flag)
    await q.events.create({ name: "n", start_time: "in 1 hour", webhook: "https://example.com/h" }, { via: "test" });
    // The stub answers {}: no result for the one event sent is an error.
    await assert.rejects(q.events.createMany([{ name: "n", start_time: "in 1 hour", webhook: "https://example.com/h" }], { idempotencyKey: "k" }), /0 results for 1 events/);
    await q.events.list({ tags: ["a", "b"], tags_all: ["c"], status: "active", limit: 10, cursor: "x" });
    await q.events.get(id);
    await q.events.get(id, { include_deleted: true });
    await q.events.getWithETag(id);
    await q.events.update(id, { description: "d" }, { ifMatch: '"3"' });
    await q.events.delete(id, { ifMatch: '"3"' });
    await q.events.upsert("cart-42", { name: "cart reminder", start_time: "in 1 hour", webhook: "https://example.com/h", debounce: "10m", max_wait: "1h" });
    await q.events.deleteByKey("cart-42");
    await q.events.pause(id);
    await q.events.pause(id, { until: soon, reason: "deploy", catch_up: "skip" });
    await q.events.resume(id, { catch_up: "fire" });
    await q.events.trigger(id, { idempotencyKey: "k1" });
    await q.events.backfill(id, { from: new Date(Date.now() - 86_400_000), to: "1 hour ago", respect_exceptions: false });
    await q.events.rotateSecret(id, { grace: "1h" });
    await q.events.occurrences(id, { status: "completed", order: "scheduled_at", limit: 2 });
    for await (const _ of q.events.allOccurrences(id));
    await q.events.preview(id, { count: 3, after: soon });
    await q.events.history(id, { include_deleted: true, limit: 5, cursor: "x" });
    for await (const _ of q.events.allHistory(id));
    await q.events.exceptions(id);
    await q.events.addException(id, { at: soon, action: "skip" });
    await q.events.deleteException(id, new Date(soon));
    await q.schedules.preview({ rrule: "FREQ=DAILY", count: 2 });
    await q.occurrences.list({ event_id: id, archived: false, order: "-scheduled_at", page: 2 });
    for await (const _ of q.occurrences.all({ event_id: id }));
    await q.occurrences.get(id);
    await q.occurrences.attempts(id);
    await q.occurrences.replay(id);
    await q.occurrences.replayMatching({ status: "failed", limit: 10 });
    await q.occurrences.skip(id, { reason: "holiday" });
    await q.occurrences.unskip(id);
    await q.occurrences.move(id, { to: soon });
    await q.occurrences.complete(id, { status: "succeeded", output: { rows: 1 } });
    await q.occurrences.heartbeat(id);
    await q.occurrences.deliveries(id, { limit: 5, cursor: "x" });
    for await (const _ of q.occurrences.allDeliveries(id));
    await q.occurrences.replayDelivery(id, id);
    await q.events.create({ name: "n", start_time: "in 1 hour", topic: "digest.daily", metadata: { region: "eu" } });
    const base = `http://127.0.0.1:${server.address().port}`;
    const run = new DeliveryRun(
      { token: "qrun_x", complete_url: `${base}/occurrences/${id}/complete`, heartbeat_url: `${base}/occurrences/${id}/heartbeat`, deadline: soon },
      { retries: 0 },
    );
    await run.complete("failed");
    await run.heartbeat();
    await q.events.create({ name: "n", start_time: "in 1 hour", webhook: "https://example.com/h", concurrency: { key: "customer-42", limit: 2 }, overlap: "skip" });
    await q.events.update(id, { concurrency: null });
    await q.concurrencyKeys.list({ limit: 10, cursor: "x" });
    for await (const _ of q.concurrencyKeys.all());
    await q.concurrencyKeys.get("tenant:42@eu");
    await q.concurrencyKeys.pause("customer-42");
    await q.concurrencyKeys.resume("customer-42");
    await q.calendars.create({ name: "holidays" });
    await q.calendars.list({ tags: ["a"] });
    for await (const _ of q.calendars.all());
    await q.calendars.get(id);
    await q.calendars.update(id, { name: "holidays" }, { ifMatch: '"1"' });
    await q.calendars.delete(id);
    await q.endpoints.create({ name: "billing", url: "https://example.com/h", rate_limit: { per_second: 5 } });
    await q.endpoints.list({ tags: ["a"], state: "open" });
    for await (const _ of q.endpoints.all());
    await q.endpoints.get(id);
    await q.endpoints.update(id, { name: "b" }, { ifMatch: '"1"' });
    await q.endpoints.update(id, { rate_limit: null });
    await q.endpoints.delete(id);
    await q.endpoints.enable(id);
    await q.endpoints.disable(id);
    await q.endpoints.rotateSecret(id, { grace: "1h" });
    await q.endpoints.test(id);
    await q.endpoints.circuitHistory(id, { limit: 5, cursor: "x" });
    await q.topics.create({ name: "digest.daily", description: "d", schema: { type: "object" } });
    await q.topics.list({ limit: 5, cursor: "x" });
    for await (const _ of q.topics.all());
    await q.topics.get("digest.daily");
    await q.topics.update("digest.daily", { description: "d" }, { ifMatch: '"1"' });
    await q.topics.update("digest.daily", { schema: null });
    await q.topics.delete("digest.daily", { ifMatch: '"1"' });
    await q.subscriptions.create({ topic: "digest.*", endpoint_id: id, filter: 'tags.exists(t, t == "a")', description: "d", tags: ["a"], paused: false });
    await q.subscriptions.list({ topic: "digest.*", endpoint_id: id, paused: false, tags: ["a", "b"], tags_all: ["c"], limit: 5, cursor: "x" });
    for await (const _ of q.subscriptions.all({ topic: "digest.*" }));
    await q.subscriptions.get(id);
    await q.subscriptions.update(id, { paused: true }, { ifMatch: '"1"' });
    await q.subscriptions.update(id, { filter: null, description: null });
    await q.subscriptions.pause(id);
    await q.subscriptions.resume(id);
    await q.subscriptions.deliveries(id, { limit: 5, cursor: "x" });
    for await (const _ of q.subscriptions.allDeliveries(id));
    await q.subscriptions.delete(id, { ifMatch: '"1"' });
    await q.tokens.create({ sub: "ci", access: "read", expires_at: soon, scope: ["a"] });
    await q.tokens.list();
    await q.tokens.revoke("tok");
    await q.portalLinks.create({ tags: ["customer-42"], expires_in: "1h", return_url: "https://app.example.com/settings" });
    await q.portalLinks.redeem("qpl_x");
    await q.notificationChannels.create({ name: "ops", type: "webhook", url: "https://example.com/n" });
    await q.notificationChannels.list();
    await q.notificationChannels.get(id);
    await q.notificationChannels.update(id, { name: "ops" });
    await q.notificationChannels.delete(id);
    await q.notificationChannels.test(id);
    await q.notificationChannels.notices(id, { limit: 5, cursor: "x" });
  } finally {
    server.close();
  }
  assert.deepEqual(problems, []);
  const missing = routes.map((r) => r.key).filter((k) => !hit.has(k)).sort();
  assert.deepEqual(missing, [], `operations of openapi.json the client never calls: add a method to src/client.ts`);
});
