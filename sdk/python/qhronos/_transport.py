"""Sends requests with urllib, retrying what is safe to retry."""
import json
import random
import re
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Generic, Iterator, List, Mapping, Optional, TypeVar

from .errors import APIError, Cancelled, error_from_answer

T = TypeVar("T")


@dataclass
class Page(Generic[T]):
    """One page of a list and the cursor of the next ("" on the last)."""

    items: List[T]
    next_cursor: str = ""


@dataclass
class Answer:
    data: Any
    headers: Mapping[str, str]
    status: int


@dataclass
class Request:
    method: str
    path: str
    query: Optional[Mapping[str, Any]] = None
    body: Any = None
    #: safe to send twice: retried on network errors and 502/503/504 too
    idempotent: Optional[bool] = None
    #: give a POST an Idempotency-Key of its own, making it idempotent
    ensure_key: bool = False
    text: bool = False
    headers: Dict[str, str] = field(default_factory=dict)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=timezone.utc)  # a naive datetime is taken as UTC
        return v.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
    return str(v)


def encode_query(params: Optional[Mapping[str, Any]]) -> str:
    """Leaves out None, repeats lists, writes datetimes as RFC 3339; a
    trailing underscore is dropped (from_ is the parameter from)."""
    if not params:
        return ""
    pairs = []
    for k, v in params.items():
        if v is None:
            continue
        name = k[:-1] if k.endswith("_") else k
        for item in (v if isinstance(v, (list, tuple)) else [v]):
            pairs.append((name, _value(item)))
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


def to_json(v: Any) -> Any:
    """Makes datetimes JSON: RFC 3339 strings."""
    if isinstance(v, datetime):
        return _value(v)
    if isinstance(v, dict):
        return {k: to_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_json(x) for x in v]
    return v


_NEXT = re.compile(r'<([^>]*)>\s*;\s*rel="?next"?')


def next_cursor(link: Optional[str]) -> str:
    """The cursor of a Link: <...?cursor=...>; rel="next" header."""
    m = _NEXT.search(link or "")
    if not m:
        return ""
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(m.group(1)).query)
    return q.get("cursor", [""])[0]


def paginate(fetch) -> Iterator[Any]:
    """Walks pages from fetch(cursor) until the last one."""
    cursor = None
    while True:
        page = fetch(cursor)
        yield from page.items
        if not page.next_cursor or page.next_cursor == cursor:
            return
        cursor = page.next_cursor


def path_id(v: str) -> str:
    """Escapes one path segment."""
    return urllib.parse.quote(str(v), safe="")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # an answer is the server's own, never another's
        return None


class Transport:
    def __init__(self, base_url: str, token: Optional[str], retries: int, backoff: float,
                 max_wait: float, timeout: float, via: Optional[str]):
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise ValueError(f"base_url: {base_url!r} is not an http(s) URL")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.retries = max(0, retries)
        self.backoff = backoff
        self.max_wait = max_wait
        self.timeout = timeout
        self.via = via
        self._opener = urllib.request.build_opener(_NoRedirect)

    def send(self, r: Request, *, idempotency_key: Optional[str] = None, if_match: Optional[str] = None,
             via: Optional[str] = None, timeout: Optional[float] = None,
             cancel: Optional[threading.Event] = None) -> Answer:
        headers = {"Accept": "application/json", "User-Agent": "qhronos-python"}
        headers.update(r.headers)
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if via or self.via:
            headers["X-Qhronos-Via"] = via or self.via or ""
        if if_match:
            headers["If-Match"] = if_match
        idempotent = r.idempotent if r.idempotent is not None else r.method in ("GET", "PUT", "DELETE")
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
            idempotent = True
        elif r.ensure_key and self.retries > 0:
            # A retried create must not create twice: the server replays the
            # first answer for the same key.
            headers["Idempotency-Key"] = "qhronos-py-" + secrets.token_hex(16)
            idempotent = True
        data = None
        if r.body is not None:
            data = json.dumps(to_json(r.body)).encode()
            headers["Content-Type"] = "application/json"
        url = self.base_url + r.path + encode_query(r.query)
        attempt = 0
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled(f"{r.method} {r.path}: cancelled")
            try:
                return self._once(r, url, data, headers, timeout)
            except (APIError, OSError) as err:
                wait = self._retry_wait(err, attempt, idempotent)
                if wait is None:
                    raise
            if cancel is not None:
                if cancel.wait(wait):
                    raise Cancelled(f"{r.method} {r.path}: cancelled")
            else:
                time.sleep(wait)
            attempt += 1

    def _once(self, r: Request, url: str, data: Optional[bytes], headers: Dict[str, str],
              timeout: Optional[float]) -> Answer:
        req = urllib.request.Request(url, data=data, headers=headers, method=r.method)
        try:
            with self._opener.open(req, timeout=timeout or self.timeout) as res:
                body = res.read()
                status, hdrs = res.status, res.headers
        except urllib.error.HTTPError as e:
            body = e.read()
            raise error_from_answer(e.code, e.reason, e.headers, body) from None
        if r.text:
            return Answer(body.decode("utf-8", "replace"), hdrs, status)
        return Answer(json.loads(body) if body else None, hdrs, status)

    def _retry_wait(self, err: Exception, attempt: int, idempotent: bool) -> Optional[float]:
        if attempt >= self.retries:
            return None
        base = self.backoff * (2 ** attempt)
        wait = base / 2 + random.random() * base / 2
        if isinstance(err, APIError):
            if err.status == 429:
                pass  # refused before it was handled: safe whatever the method
            elif err.status in (502, 503, 504):
                if not idempotent:
                    return None
            else:
                return None
            if err.retry_after:
                wait = err.retry_after
        elif not idempotent:
            return None  # a network error of a call that may have acted
        return wait if wait <= self.max_wait else None
