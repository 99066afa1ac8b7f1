"""Errors of the client: an APIError per error answer, a subclass per status."""
import json
from typing import Any, Dict, Mapping, Optional, Type


class QhronosError(Exception):
    """Base of every error this package raises."""


class APIError(QhronosError):
    """An error answer of the server.

    status is the HTTP status; field names the offending field of a
    validation error ("start_time"); retry_after is the delay in seconds the
    server asked for (429, 503); data is the parsed body (or its text).
    """

    def __init__(self, status: int, message: str, *, field: Optional[str] = None,
                 retry_after: Optional[float] = None, request_id: Optional[str] = None, data: Any = None):
        super().__init__(f"qhronos: {status} {message}")
        self.status = status
        self.message = message
        self.field = field
        self.retry_after = retry_after
        self.request_id = request_id
        self.data = data


class BadRequestError(APIError):
    """400: the request is invalid; field names what."""


class UnauthorizedError(APIError):
    """401: no token, or one the server does not accept."""


class ForbiddenError(APIError):
    """403: the token may not do this."""


class NotFoundError(APIError):
    """404: no such resource (or not visible to the token)."""


class ConflictError(APIError):
    """409: the resource's state forbids it (in use, already queued, ...)."""


class PreconditionFailedError(APIError):
    """412: the If-Match ETag is stale."""


class RateLimitError(APIError):
    """429: rate limited; retry_after says when to try again."""


class UnavailableError(APIError):
    """503: the server is not ready."""


class Cancelled(QhronosError):
    """The call's cancel event was set."""


_BY_STATUS: Dict[int, Type[APIError]] = {
    400: BadRequestError, 401: UnauthorizedError, 403: ForbiddenError, 404: NotFoundError,
    409: ConflictError, 412: PreconditionFailedError, 429: RateLimitError, 503: UnavailableError,
}


def error_from_answer(status: int, reason: str, headers: Mapping[str, str], body: bytes) -> APIError:
    """The typed error of a non-2xx answer."""
    text = body.decode("utf-8", "replace")
    data: Any = text
    message, field = reason or "error", None
    try:
        data = json.loads(text)
    except ValueError:
        pass
    if isinstance(data, dict):
        if isinstance(data.get("error"), str) and data["error"]:
            message = data["error"]
        if isinstance(data.get("field"), str) and data["field"]:
            field = data["field"]
    retry_after = None
    try:
        seconds = int(headers.get("Retry-After") or "")
        if seconds > 0:
            retry_after = float(seconds)
    except ValueError:
        pass
    kind = _BY_STATUS.get(status, APIError)
    return kind(status, message, field=field, retry_after=retry_after,
                request_id=headers.get("X-Request-ID"), data=data)
