import { APIError, errorFromResponse } from "./errors.js";

/** Options of every call. */
export interface CallOptions {
  /** Aborts the call, including a wait between retries. */
  signal?: AbortSignal;
  /** Makes a create or trigger safe to repeat: the same key and body replay
   * the first answer for 24 h. Creates and triggers send a fresh one when
   * none is given (unless retries are off). */
  idempotencyKey?: string;
  /** Makes an update or delete conditional on an ETag (412 when it changed). */
  ifMatch?: string;
  /** Names the tool making this call (X-Qhronos-Via). */
  via?: string;
}

/** Options of a client. */
export interface ClientOptions {
  /** The server, e.g. "http://127.0.0.1:8080" (a path prefix is kept). */
  baseUrl: string;
  /** The master token or a JWT. */
  token?: string;
  /** How many times a failed idempotent call is retried (default 2; 0: never). */
  retries?: number;
  /** First retry delay in ms (default 250, doubling, with jitter). */
  backoffMs?: number;
  /** Longest wait in ms, a Retry-After included (default 30,000); a longer
   * Retry-After is thrown as the error instead. */
  maxWaitMs?: number;
  /** Names the tool making every call (X-Qhronos-Via). */
  via?: string;
  /** The fetch to use (default: globalThis.fetch). */
  fetch?: typeof fetch;
}

type QueryValue = string | number | boolean | Date | null | undefined | readonly (string | number | boolean | Date)[];

/** One request. */
export interface Request {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  query?: object;
  body?: unknown;
  /** Safe to send twice: retried on network errors and 502/503/504 too. */
  idempotent?: boolean;
  /** Gives a POST an Idempotency-Key of its own, making it idempotent. */
  ensureKey?: boolean;
  /** Answer as text instead of JSON. */
  text?: boolean;
}

/** A decoded answer. */
export interface Answer<T> {
  data: T;
  headers: Headers;
  status: number;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

async function randomKey(): Promise<string> {
  const bytes = new Uint8Array(16);
  // Node 18 has WebCrypto only under node:crypto (a variable name keeps
  // bundlers for browsers, which have globalThis.crypto, from resolving it).
  const name = "node:crypto";
  const c: Pick<Crypto, "getRandomValues"> = globalThis.crypto ?? ((await import(name)) as { webcrypto: Crypto }).webcrypto;
  c.getRandomValues(bytes);
  return "qhronos-ts-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function encodeValue(v: string | number | boolean | Date): string {
  return v instanceof Date ? v.toISOString() : String(v);
}

/** encodeQuery leaves out undefined and null, repeats lists, and writes dates
 * as RFC 3339. */
export function encodeQuery(query?: object): string {
  if (!query) return "";
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query) as [string, QueryValue][]) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const item of v) q.append(k, encodeValue(item));
    else q.append(k, encodeValue(v as string | number | boolean | Date));
  }
  const s = q.toString();
  return s ? "?" + s : "";
}

/** The cursor of a `Link: <…?cursor=…>; rel="next"` header ("" on the last page). */
export function nextCursor(link: string | null): string {
  const m = link?.match(/<([^>]*)>\s*;\s*rel="?next"?/);
  if (!m) return "";
  try {
    return new URL(m[1], "http://x").searchParams.get("cursor") ?? "";
  } catch {
    return "";
  }
}

/** pathID escapes one path segment. */
export const pathID = (id: string) => encodeURIComponent(id);

/** Transport sends requests, retrying what is safe to retry. */
export class Transport {
  readonly baseUrl: string;
  readonly token?: string;
  private readonly retries: number;
  private readonly backoffMs: number;
  private readonly maxWaitMs: number;
  private readonly via?: string;
  private readonly fetch: typeof fetch;

  constructor(o: ClientOptions) {
    let u: URL;
    try {
      u = new URL(o.baseUrl);
    } catch {
      throw new TypeError(`baseUrl: ${JSON.stringify(o.baseUrl)} is not an http(s) URL`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new TypeError(`baseUrl: ${JSON.stringify(o.baseUrl)} is not an http(s) URL`);
    }
    this.baseUrl = o.baseUrl.replace(/\/+$/, "");
    this.token = o.token;
    this.retries = Math.max(0, o.retries ?? 2);
    this.backoffMs = o.backoffMs ?? 250;
    this.maxWaitMs = o.maxWaitMs ?? 30_000;
    this.via = o.via;
    this.fetch = o.fetch ?? globalThis.fetch.bind(globalThis);
  }

  async send<T>(r: Request, opts: CallOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const via = opts.via ?? this.via;
    if (via) headers["X-Qhronos-Via"] = via;
    if (opts.ifMatch) headers["If-Match"] = opts.ifMatch;
    let idempotent = r.idempotent ?? (r.method === "GET" || r.method === "PUT" || r.method === "DELETE");
    if (opts.idempotencyKey) {
      headers["Idempotency-Key"] = opts.idempotencyKey;
      idempotent = true;
    } else if (r.ensureKey && this.retries > 0) {
      // A retried create must not create twice: the server replays the
      // first answer for the same key.
      headers["Idempotency-Key"] = await randomKey();
      idempotent = true;
    }
    let body: string | undefined;
    if (r.body !== undefined) {
      body = JSON.stringify(r.body);
      headers["Content-Type"] = "application/json";
    }
    const url = this.baseUrl + r.path + encodeQuery(r.query);
    for (let attempt = 0; ; attempt++) {
      let err: unknown;
      try {
        const res = await this.fetch(url, { method: r.method, headers, body, signal: opts.signal });
        const text = await res.text();
        if (res.ok) {
          const data = (r.text ? text : text ? JSON.parse(text) : undefined) as T;
          return { data, headers: res.headers, status: res.status };
        }
        err = errorFromResponse(res, text);
      } catch (e) {
        err = e;
      }
      const wait = this.retryWait(err, attempt, idempotent, opts.signal);
      if (wait === undefined) throw err;
      await sleep(wait, opts.signal);
    }
  }

  /** retryWait is the delay before retrying a failed attempt, or undefined
   * when it must not be retried. */
  private retryWait(err: unknown, attempt: number, idempotent: boolean, signal?: AbortSignal): number | undefined {
    if (attempt >= this.retries || signal?.aborted) return undefined;
    const base = this.backoffMs * 2 ** attempt;
    let wait = base / 2 + Math.random() * (base / 2);
    if (err instanceof APIError) {
      if (err.status === 429) {
        // refused before it was handled: safe whatever the method
      } else if ([502, 503, 504].includes(err.status)) {
        if (!idempotent) return undefined;
      } else {
        return undefined;
      }
      if (err.retryAfter) wait = err.retryAfter * 1000;
    } else if (err instanceof SyntaxError || !idempotent) {
      return undefined; // an undecodable answer, or a network error of a call that may have acted
    } else if ((err as { name?: string })?.name === "AbortError") {
      return undefined;
    }
    return wait <= this.maxWaitMs ? wait : undefined;
  }
}
