// /ws: live deliveries over a WebSocket, with the global WebSocket of
// browsers and Node >= 22 (Node 20: --experimental-websocket), or one given.

/** The /ws handshake: a client-hook receives the occurrences of events whose
 * action is websocket with that client name (and may ack them); a
 * tag-listener receives one frame per occurrence of events with its tags. */
export interface Subscription {
  clientName?: string;
  tags?: string[];
}

/** A frame the server sends: "event" (an occurrence), "ack" or "error". */
export interface Frame {
  type: string;
  message?: string;
  event_id?: string;
  occurrence_id?: string;
  scheduled_at?: string;
  attempt?: number;
  name?: string;
  description?: string;
  tags?: string[];
  metadata?: unknown;
  payload?: unknown;
  require_ack?: boolean;
  /** The signed request a webhook delivery would carry (client-hook frames):
   * verifyDelivery({ headers, body }) checks it. */
  webhook?: { headers: Record<string, string>; body: string };
}

/** A subscribed connection: iterate it for frames, ack occurrences, close. */
export interface Connection extends AsyncIterable<Frame> {
  /** Acknowledges an occurrence of an event created with require_ack. */
  ack(eventId: string, occurrenceId: string): void;
  close(): void;
}

type WebSocketLike = {
  send(data: string): void;
  close(): void;
  addEventListener(type: string, listener: (ev: { data?: unknown }) => void): void;
};
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface SubscribeOptions {
  signal?: AbortSignal;
  /** A WebSocket class (default: globalThis.WebSocket). */
  WebSocket?: WebSocketConstructor;
}

/** subscribe connects to /ws and resolves once the server registered the
 * subscription; a refusal rejects with the server's message. */
export function subscribe(baseUrl: string, token: string | undefined, sub: Subscription, opts: SubscribeOptions = {}): Promise<Connection> {
  const WS = opts.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (!WS) return Promise.reject(new Error("no WebSocket here: pass options.WebSocket (Node 20: run with --experimental-websocket)"));
  const hasClient = !!sub.clientName;
  const hasTags = !!sub.tags?.length;
  if (hasClient === hasTags) return Promise.reject(new TypeError("subscription: set either clientName or tags"));
  const handshake = hasClient
    ? { type: "client-hook", client_name: sub.clientName, token }
    : { type: "tag-listener", tags: sub.tags, token };
  const url = baseUrl.replace(/^http/, "ws") + "/ws";
  const ws = new WS(url);
  const frames: Frame[] = [];
  const waiting: ((r: IteratorResult<Frame>) => void)[] = [];
  let closed = false;
  let registered = false;

  return new Promise<Connection>((resolve, reject) => {
    const finish = () => {
      closed = true;
      for (const w of waiting.splice(0)) w({ value: undefined, done: true });
    };
    opts.signal?.addEventListener("abort", () => {
      ws.close();
      if (!registered) reject(opts.signal!.reason);
    });
    ws.addEventListener("open", () => ws.send(JSON.stringify(handshake)));
    ws.addEventListener("error", () => {
      if (!registered) reject(new Error(`websocket ${url}: connection failed`));
    });
    ws.addEventListener("close", () => {
      if (!registered) reject(new Error(`websocket ${url}: closed before the handshake answer`));
      finish();
    });
    ws.addEventListener("message", (ev) => {
      let f: Frame;
      try {
        f = JSON.parse(String(ev.data)) as Frame;
      } catch {
        return;
      }
      if (!registered) {
        if (f.type !== "ack") {
          ws.close();
          reject(new Error(`qhronos: websocket handshake refused: ${f.message ?? f.type}`));
          return;
        }
        registered = true;
        resolve(conn);
        return;
      }
      const w = waiting.shift();
      if (w) w({ value: f, done: false });
      else frames.push(f);
    });

    const conn: Connection = {
      ack(eventId, occurrenceId) {
        ws.send(JSON.stringify({ type: "ack", event_id: eventId, occurrence_id: occurrenceId }));
      },
      close() {
        ws.close();
        finish();
      },
      [Symbol.asyncIterator]() {
        return {
          next(): Promise<IteratorResult<Frame>> {
            const f = frames.shift();
            if (f) return Promise.resolve({ value: f, done: false });
            if (closed) return Promise.resolve({ value: undefined, done: true });
            return new Promise((r) => waiting.push(r));
          },
          return(): Promise<IteratorResult<Frame>> {
            conn.close();
            return Promise.resolve({ value: undefined, done: true });
          },
        };
      },
    };
  });
}
