// Runs the real qhronosd for the tests: built from this checkout (or
// QHRONOS_BIN), on a free loopback port, with the embedded SQLite store in a
// temporary directory, or on PostgreSQL + Redis when QHRONOS_SDK_DATABASE_URL
// (and QHRONOS_SDK_REDIS_URL, QHRONOS_SDK_REDIS_PREFIX) name an isolated
// database and key prefix.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

const hex = (n) => randomBytes(n).toString("hex");

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** waitFor polls cond until it returns a truthy value or the deadline passes. */
export async function waitFor(what, cond, timeoutMs = 60_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** startServer runs qhronosd and resolves once /ready answers 200. */
export async function startServer() {
  const dir = mkdtempSync(join(tmpdir(), "qhronos-sdk-ts-"));
  let bin = process.env.QHRONOS_BIN;
  if (!bin) {
    bin = join(dir, "qhronosd");
    execFileSync("go", ["build", "-o", bin, "./cmd/qhronosd"], { cwd: repoRoot, stdio: "inherit" });
  }
  const addr = `127.0.0.1:${await freePort()}`;
  const dataDir = join(dir, "data");
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    QHRONOS_SERVER_ADDR: addr,
    QHRONOS_SERVER_DATA_DIR: dataDir,
    QHRONOS_SCHEDULER_MAX_SLEEP: "100ms",
    QHRONOS_SCHEDULER_DRAIN_TIMEOUT: "3s",
    QHRONOS_ACTIONS_ATTEMPT_TIMEOUT: "3s",
    QHRONOS_RETRY_INITIAL_BACKOFF: "1s",
    QHRONOS_RETRY_MAX_BACKOFF: "1s",
    QHRONOS_SERVER_SHUTDOWN_TIMEOUT: "2s",
    QHRONOS_ARCHIVAL_ENABLED: "false",
    QHRONOS_LOG_LEVEL: "warn",
    // JWT principals (not the master token) get a small bucket, so the 429
    // test meets the limit within a few calls.
    QHRONOS_RATELIMIT_RATE: "2",
    QHRONOS_RATELIMIT_BURST: "3",
  };
  const backend = process.env.QHRONOS_SDK_DATABASE_URL ? "postgres" : "sqlite";
  if (backend === "postgres") {
    // Production mode: the secrets must be given, and loopback receivers allowed.
    Object.assign(env, {
      QHRONOS_DATABASE_URL: process.env.QHRONOS_SDK_DATABASE_URL,
      QHRONOS_AUTH_MASTER_TOKEN: hex(32),
      QHRONOS_AUTH_JWT_SECRET: hex(32),
      QHRONOS_HMAC_DEFAULT_SECRET: hex(32),
      QHRONOS_SECRETS_ENCRYPTION_KEY: hex(32),
      QHRONOS_OUTBOUND_ALLOW_CIDRS: "127.0.0.0/8",
    });
    if (process.env.QHRONOS_SDK_REDIS_URL) {
      env.QHRONOS_REDIS_URL = process.env.QHRONOS_SDK_REDIS_URL;
      env.QHRONOS_REDIS_PREFIX = process.env.QHRONOS_SDK_REDIS_PREFIX || `sdk-ts-${hex(4)}:`;
    }
  }
  let output = "";
  const proc = spawn(bin, ["serve"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  proc.stdout.on("data", (d) => (output += d));
  proc.stderr.on("data", (d) => (output += d));
  const exited = new Promise((r) => proc.on("exit", r));
  let dead = false;
  exited.then(() => (dead = true));
  const url = `http://${addr}`;
  try {
    await waitFor("qhronosd /ready", async () => {
      if (dead) throw new Error(`qhronosd exited:\n${output}`);
      try {
        return (await fetch(url + "/ready")).status === 200;
      } catch {
        return false;
      }
    });
  } catch (e) {
    proc.kill("SIGKILL");
    throw e;
  }
  // The embedded default writes its generated secrets to secrets.json; a
  // production server has the ones given.
  const secrets = backend === "sqlite" ? JSON.parse(readFileSync(join(dataDir, "secrets.json"), "utf8")) : null;
  return {
    url,
    backend,
    token: secrets ? secrets.master_token : env.QHRONOS_AUTH_MASTER_TOKEN,
    defaultSecret: secrets ? secrets.hmac_default_secret : env.QHRONOS_HMAC_DEFAULT_SECRET,
    output: () => output,
    async stop() {
      if (!dead) {
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** startReceiver is a loopback webhook receiver keeping every request with
 * its raw body; answer(req) gives the status (default 200). */
export async function startReceiver(answer = () => 200) {
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const r = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) };
      requests.push(r);
      res.statusCode = answer(r);
      res.end();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    requests,
    /** next waits for the n-th request (1-based). */
    next: (n) => waitFor(`delivery #${n}`, () => requests[n - 1]),
    close: () => new Promise((r) => server.close(r)),
  };
}
