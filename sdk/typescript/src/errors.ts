/** An error answer of the server: `status`, the server's message and, for a
 * validation error, the `field` it names. Subclasses per status let callers
 * use `instanceof`. */
export class APIError extends Error {
  /** HTTP status code. */
  readonly status: number;
  /** The offending field of a validation error ("start_time"), when named. */
  readonly field?: string;
  /** Seconds the server asked to wait (429, 503), when it said. */
  readonly retryAfter?: number;
  /** The server's X-Request-ID, for its logs. */
  readonly requestId?: string;
  /** The answer's body, parsed when it is JSON (else its text). */
  readonly data: unknown;

  constructor(status: number, message: string, init: { field?: string; retryAfter?: number; requestId?: string; data?: unknown } = {}) {
    super(`qhronos: ${status} ${message}`);
    this.name = new.target.name;
    this.status = status;
    this.field = init.field;
    this.retryAfter = init.retryAfter;
    this.requestId = init.requestId;
    this.data = init.data;
  }
}

/** 400: the request is invalid; `field` names what. */
export class BadRequestError extends APIError {}
/** 401: no token, or one the server does not accept. */
export class UnauthorizedError extends APIError {}
/** 403: the token may not do this. */
export class ForbiddenError extends APIError {}
/** 404: no such resource (or not visible to the token). */
export class NotFoundError extends APIError {}
/** 409: the resource's state forbids it (in use, already queued, …). */
export class ConflictError extends APIError {}
/** 412: the If-Match ETag is stale. */
export class PreconditionFailedError extends APIError {}
/** 429: rate limited; `retryAfter` says when to try again. */
export class RateLimitError extends APIError {}
/** 503: the server is not ready. */
export class UnavailableError extends APIError {}

const byStatus: Record<number, typeof APIError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  412: PreconditionFailedError,
  429: RateLimitError,
  503: UnavailableError,
};

/** errorFromResponse builds the typed error of a non-2xx answer. */
export function errorFromResponse(res: Response, text: string): APIError {
  let data: unknown = text;
  let message = res.statusText || "error";
  let field: string | undefined;
  try {
    data = JSON.parse(text);
    if (data && typeof data === "object") {
      const body = data as { error?: unknown; field?: unknown };
      if (typeof body.error === "string" && body.error) message = body.error;
      if (typeof body.field === "string" && body.field) field = body.field;
    }
  } catch {
    // not JSON: keep the text
  }
  const seconds = Number.parseInt(res.headers.get("Retry-After") ?? "", 10);
  const Kind = byStatus[res.status] ?? APIError;
  return new Kind(res.status, message, {
    field,
    retryAfter: Number.isFinite(seconds) && seconds > 0 ? seconds : undefined,
    requestId: res.headers.get("X-Request-ID") ?? undefined,
    data,
  });
}
