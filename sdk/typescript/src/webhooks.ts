// Verifying Qhronos deliveries on the receiving side. The Standard Webhooks
// headers are checked by the official `standardwebhooks` package; what it
// does not know is Qhronos' own: the key rule for secrets that are not
// "whsec_" base64, several secrets during a rotation, and the original
// X-Qhronos-Signature header (no timestamp, so opt-in). A callback event's
// delivery also carries the run it starts, which DeliveryRun completes.
import { Webhook, WebhookVerificationError } from "standardwebhooks";

import { type CallOptions, type ClientOptions, Transport } from "./transport.js";
import type { Occurrence, RunReport } from "./types.js";

export { WebhookVerificationError };

/** Options of a DeliveryRun's calls: those of a client, but for its URLs and token. */
export type RunOptions = Omit<ClientOptions, "baseUrl" | "token">;

/**
 * The run a delivery of a callback event (`"completion": "callback"`) starts, from its `run` member: the run
 * token (also sent as the Qhronos-Run-Token header), where to complete the run or say it is alive, and by when.
 * The receiver answers 2xx at once (202), does the work, then calls `complete` with the token alone — no API
 * token needed. verifyDelivery gives a delivery's `run` as one; `new DeliveryRun(delivery.run)` rebuilds it from
 * the JSON (e.g. in a worker that got the job from a queue), with options such as `fetch` or `retries`.
 */
export class DeliveryRun {
  /** The bearer token that completes this occurrence's run, and nothing else. */
  readonly token: string;
  /** POST /occurrences/{id}/complete on the server that sent the delivery. */
  readonly complete_url: string;
  /** POST /occurrences/{id}/heartbeat on the server that sent the delivery. */
  readonly heartbeat_url: string;
  /** RFC 3339: when the run times out unless completed or heartbeated (as of the delivery). */
  readonly deadline: string;
  readonly #options: RunOptions;

  constructor(run: Pick<DeliveryRun, "token" | "complete_url" | "heartbeat_url" | "deadline">, options: RunOptions = {}) {
    this.token = run.token;
    this.complete_url = run.complete_url;
    this.heartbeat_url = run.heartbeat_url;
    this.deadline = run.deadline;
    this.#options = options;
  }

  /**
   * Reports how the run ended (POST complete_url with the run token): "succeeded" completes the occurrence,
   * "failed" fails it; `output` is any JSON up to 16 KB, kept on the occurrence's `run.output`. Answers the
   * occurrence. The same report again answers the same (so it is retried like a PUT); a different one after the
   * end, or any after a timeout, is a ConflictError.
   */
  complete(status: RunReport["status"], output?: unknown, opts?: CallOptions): Promise<Occurrence> {
    return this.#post(this.complete_url, { status, output }, opts);
  }

  /** Says the run is alive (POST heartbeat_url with the run token): its deadline moves to now + the event's
   * max_runtime. Answers the occurrence (its `run.deadline` is the new one); a run no longer under way is a
   * ConflictError. */
  heartbeat(opts?: CallOptions): Promise<Occurrence> {
    return this.#post(this.heartbeat_url, undefined, opts);
  }

  async #post(url: string, body: RunReport | undefined, opts?: CallOptions): Promise<Occurrence> {
    const t = new Transport({ ...this.#options, baseUrl: url, token: this.token });
    return (await t.send<Occurrence>({ method: "POST", path: "", body, idempotent: true }, opts)).data;
  }
}

/** The JSON body of a webhook delivery (and of a forwarded client-hook frame). */
export interface Delivery {
  event_id: string;
  occurrence_id: string;
  attempt: number;
  name: string;
  description: string;
  scheduled_at: string;
  dispatched_at: string;
  metadata: unknown;
  tags: string[];
  /** Only for an event that completes by callback: the run this delivery starts. */
  run?: DeliveryRun;
}

/** A received request as plain values, e.g. from node:http
 * (`{ headers: req.headers, body: rawBody }`). */
export interface ReceivedDelivery {
  headers: Headers | Record<string, string | string[] | undefined>;
  body: string | Uint8Array;
}

export interface VerifyOptions {
  /** Accept requests that carry only X-Qhronos-Signature (senders of the
   * original Qhronos API). Such a request has no timestamp, so a captured one
   * can be replayed: deduplicate on its occurrence_id. */
  legacy?: boolean;
}

/** signingKey is the HMAC key of a secret, exactly as the server derives it:
 * a "whsec_" secret is the base64 of its key; any other secret (and a
 * "whsec_" one that is not valid base64) is used as its UTF-8 bytes. */
export function signingKey(secret: string): Uint8Array {
  if (secret.startsWith("whsec_")) {
    const rest = secret.slice("whsec_".length);
    if (rest.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(rest)) {
      return Uint8Array.from(atob(rest), (c) => c.charCodeAt(0));
    }
  }
  return new TextEncoder().encode(secret);
}

function headerMap(h: ReceivedDelivery["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (h as Headers).forEach === "function" && typeof (h as Headers).get === "function") {
    (h as Headers).forEach((v, k) => (out[k.toLowerCase()] = v));
    return out;
  }
  for (const [k, v] of Object.entries(h as Record<string, string | string[] | undefined>)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(" ") : v;
  }
  return out;
}

async function subtle(): Promise<SubtleCrypto> {
  if (globalThis.crypto?.subtle) return globalThis.crypto.subtle;
  // Node 18 has WebCrypto only under node:crypto.
  // (A variable name keeps bundlers for browsers, which have
  // globalThis.crypto, from resolving it.)
  const name = "node:crypto";
  const nodeCrypto = (await import(name)) as { webcrypto: { subtle: SubtleCrypto } };
  return nodeCrypto.webcrypto.subtle;
}

function hexBytes(s: string): Uint8Array | undefined {
  const t = s.trim();
  if (t.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(t)) return undefined;
  return Uint8Array.from(t.match(/../g) ?? [], (b) => Number.parseInt(b, 16));
}

async function verifyLegacy(h: Record<string, string>, body: Uint8Array, secrets: string[]): Promise<void> {
  const sigs = [h["x-qhronos-signature"], h["x-qhronos-signature-new"]].flatMap((s) => (s ? [hexBytes(s)] : []));
  const s = await subtle();
  for (const secret of secrets) {
    const key = await s.importKey("raw", signingKey(secret) as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    for (const sig of sigs) {
      // subtle.verify compares in constant time.
      if (sig && (await s.verify("HMAC", key, sig as BufferSource, body as BufferSource))) return;
    }
  }
  throw new WebhookVerificationError("No matching signature found");
}

/** parse reads a verified body, its run (if any) as a DeliveryRun. */
function parse(body: string): Delivery {
  const d = JSON.parse(body) as Delivery;
  if (d !== null && typeof d === "object" && d.run !== null && typeof d.run === "object") d.run = new DeliveryRun(d.run);
  return d;
}

/**
 * verifyDelivery checks one delivery — a fetch `Request` (its body is read)
 * or `{ headers, body }` with the raw body — against the event's or
 * endpoint's secret (during a rotation, pass both: `[newSecret, oldSecret]`),
 * and returns the parsed body. It throws WebhookVerificationError when no
 * secret signed it, a header is missing, or the timestamp is more than five
 * minutes from this clock (a replay). A callback event's delivery has its `run`
 * as a DeliveryRun, whose `complete` and `heartbeat` need no API token.
 */
export async function verifyDelivery(
  request: Request | ReceivedDelivery,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): Promise<Delivery> {
  const secrets = (typeof secret === "string" ? [secret] : [...secret]).filter((s) => s !== "");
  if (secrets.length === 0) throw new WebhookVerificationError("No signing secret given");
  let raw: Uint8Array;
  let headers: Record<string, string>;
  if (typeof Request !== "undefined" && request instanceof Request) {
    raw = new Uint8Array(await request.arrayBuffer());
    headers = headerMap(request.headers);
  } else {
    const r = request as ReceivedDelivery;
    raw = typeof r.body === "string" ? new TextEncoder().encode(r.body) : r.body;
    headers = headerMap(r.headers);
  }
  const body = new TextDecoder().decode(raw);
  const standard = {
    "webhook-id": headers["webhook-id"] ?? "",
    "webhook-timestamp": headers["webhook-timestamp"] ?? "",
    "webhook-signature": headers["webhook-signature"] ?? "",
  };
  if (!standard["webhook-id"] && !standard["webhook-timestamp"] && !standard["webhook-signature"]) {
    if (!headers["x-qhronos-signature"] && !headers["x-qhronos-signature-new"]) {
      throw new WebhookVerificationError("Missing required headers");
    }
    if (!options.legacy) {
      throw new WebhookVerificationError("Only X-Qhronos-Signature, which cannot refuse a replay (see the legacy option)");
    }
    await verifyLegacy(headers, raw, secrets);
    return parse(body);
  }
  let last: unknown;
  for (const s of secrets) {
    try {
      new Webhook(signingKey(s), { format: "raw" }).verify(body, standard);
      return parse(body);
    } catch (e) {
      // A stale timestamp or a malformed header fails whatever the secret.
      if (!(e instanceof WebhookVerificationError) || e.message !== "No matching signature found") throw e;
      last = e;
    }
  }
  throw last;
}
