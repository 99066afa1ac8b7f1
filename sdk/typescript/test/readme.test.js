// The README's install lines and examples, run as written: the package is
// packed and installed into a fresh app, the "verify a delivery" example
// listens, the "create an event" example creates an event whose delivery the
// first one verifies. Only the receiver's port 3000 is swapped for a free one.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

import { startServer, waitFor } from "./harness.js";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const cleanups = [];
after(async () => {
  for (const f of cleanups.reverse()) await f();
});

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

test("the README's examples run as written, from an installed tarball", async () => {
  const readme = readFileSync(join(pkg, "README.md"), "utf8");
  const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.equal(blocks.length, 2, "the README has a create and a verify example");
  const [create, verify] = blocks;
  assert.match(create, /events\.create/);
  assert.match(verify, /verifyDelivery/);

  const app = mkdtempSync(join(tmpdir(), "qhronos-readme-"));
  cleanups.push(() => rmSync(app, { recursive: true, force: true }));
  execFileSync("npm", ["pack", "--pack-destination", app], { cwd: pkg, stdio: "pipe" });
  const tarball = readdirSync(app).find((f) => f.endsWith(".tgz"));
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "readme-app", private: true, type: "module" }));
  execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", join(app, tarball)], { cwd: app, stdio: "pipe" });

  const srv = await startServer();
  cleanups.push(() => srv.stop());
  const port = String(await freePort());
  writeFileSync(join(app, "verify.js"), verify.replaceAll("3000", port));
  writeFileSync(join(app, "create.js"), create.replaceAll("3000", port));

  let out = "";
  const receiver = spawn(process.execPath, ["verify.js"], { cwd: app, env: { ...process.env, QHRONOS_SECRET: srv.defaultSecret } });
  receiver.stdout.on("data", (d) => (out += d));
  receiver.stderr.on("data", (d) => (out += d));
  cleanups.push(() => receiver.kill());
  await waitFor("the example receiver listens", () => fetch(`http://127.0.0.1:${port}/hooks`, { method: "POST" }).then((r) => r.status === 401, () => false));

  const created = execFileSync(process.execPath, ["create.js"], {
    cwd: app,
    env: { ...process.env, QHRONOS_URL: srv.url, QHRONOS_TOKEN: srv.token },
  }).toString();
  const id = created.match(/^created ([0-9a-f-]{36})$/m)?.[1];
  assert.ok(id, created);
  await waitFor("the example receiver verifies the delivery", () => /occurrence [0-9a-f-]{36} of ping/.test(out), 90_000);
});
