"""Verifying Qhronos deliveries on the receiving side, with the standard
library: the Standard Webhooks headers (webhook-id, webhook-timestamp,
webhook-signature; one "v1," value per secret during a rotation) checked in
constant time with a five-minute tolerance, and the original
X-Qhronos-Signature when asked for. A callback event's delivery also carries
the run it starts, which DeliveryRun completes.
"""
import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, TypedDict, Union

from . import types as t
from ._transport import Request, Transport
from .errors import QhronosError

#: How far a delivery's timestamp may be from this clock, as the Standard
#: Webhooks specification recommends.
DEFAULT_TOLERANCE = 300.0


class WebhookVerificationError(QhronosError):
    """The delivery is not authentic or not fresh."""


class DeliveryRun(Dict[str, str]):
    """The run a delivery of a callback event ("completion": "callback")
    starts: its "run" member, a dict as sent (token, complete_url,
    heartbeat_url, deadline), with the two calls a receiver makes with the
    run token alone once it has answered 2xx (202) and done the work.

    verify_delivery gives a delivery's "run" as one; DeliveryRun(stored_run)
    rebuilds it from the JSON (e.g. in a worker that got the job from a
    queue). retries, backoff, max_wait, timeout and via are a Client's.
    """

    def __init__(self, run: Mapping[str, str], *, retries: int = 2, backoff: float = 0.25, max_wait: float = 30.0,
                 timeout: float = 30.0, via: Optional[str] = None):
        super().__init__(run)
        self._options = (retries, backoff, max_wait, timeout, via)

    def complete(self, status: str, output: Any = None, **kw: Any) -> t.Occurrence:
        """Reports how the run ended (POST complete_url with the run token):
        "succeeded" completes the occurrence, "failed" fails it; output is any
        JSON up to 16 KB, kept as the occurrence's run.output. Returns the
        occurrence. The same report again answers the same (so it is retried
        like a PUT); a different one after the end, or any after a timeout,
        raises ConflictError. kw: request_timeout, cancel, via."""
        body: Dict[str, Any] = {"status": status}
        if output is not None:
            body["output"] = output
        return self._post(self["complete_url"], body, kw)

    def heartbeat(self, **kw: Any) -> t.Occurrence:
        """Says the run is alive (POST heartbeat_url with the run token): its
        deadline moves to now + the event's max_runtime. Returns the
        occurrence (its run.deadline is the new one); a run no longer under
        way raises ConflictError. kw: request_timeout, cancel, via."""
        return self._post(self["heartbeat_url"], None, kw)

    def _post(self, url: str, body: Any, kw: Dict[str, Any]) -> t.Occurrence:
        retries, backoff, max_wait, timeout, via = self._options
        transport = Transport(url, self["token"], retries, backoff, max_wait, timeout, via)
        opts = {k: kw[k] for k in ("via", "cancel") if k in kw}
        if "request_timeout" in kw:
            opts["timeout"] = kw["request_timeout"]
        return transport.send(Request("POST", "", body=body, idempotent=True), **opts).data


class _DeliveryFields(TypedDict):
    event_id: str
    occurrence_id: str
    attempt: int
    name: str
    description: str
    scheduled_at: str
    dispatched_at: str
    metadata: Any
    tags: List[str]


class Delivery(_DeliveryFields, total=False):
    """The JSON body of a webhook delivery (and of a forwarded client-hook
    frame); run only for an event that completes by callback."""

    run: DeliveryRun


def _parse(raw: bytes) -> Delivery:
    """A verified body, its run (if any) as a DeliveryRun."""
    d = json.loads(raw)
    if isinstance(d, dict) and isinstance(d.get("run"), dict):
        d["run"] = DeliveryRun(d["run"])
    return d


_B64 = re.compile(r"^[A-Za-z0-9+/]*={0,2}$")


def signing_key(secret: str) -> bytes:
    """The HMAC key of a secret, exactly as the server derives it: a "whsec_"
    secret is the base64 of its key; any other secret (and a "whsec_" one that
    is not valid base64) is used as its UTF-8 bytes."""
    if secret.startswith("whsec_"):
        rest = secret[len("whsec_"):]
        if len(rest) % 4 == 0 and _B64.match(rest):
            try:
                return base64.b64decode(rest, validate=True)
            except binascii.Error:
                pass
    return secret.encode("utf-8")


def _headers(h: Any) -> Mapping[str, str]:
    items = h.items() if hasattr(h, "items") else h
    out = {}
    for k, v in items:
        k = k.lower()
        out[k] = f"{out[k]} {v}" if k in out else v  # repeated headers: values joined
    return out


def verify_delivery(headers: Any, body: Union[bytes, str], secret: Union[str, Iterable[str]], *,
                    legacy: bool = False, tolerance: float = DEFAULT_TOLERANCE,
                    now: Optional[float] = None) -> Delivery:
    """Checks one delivery and returns its parsed body.

    headers is any mapping or (name, value) pairs (case-insensitive); body the
    raw bytes as received; secret the event's or endpoint's secret, or during
    a rotation several ([new, old]). legacy accepts a request carrying only
    X-Qhronos-Signature (no timestamp, so replayable: deduplicate on
    occurrence_id). now is this clock in Unix seconds (default: time.time()).
    Raises WebhookVerificationError when no secret signed it, a header is
    missing, or the timestamp is more than tolerance seconds off (a replay).
    A callback event's delivery has its "run" as a DeliveryRun, whose
    complete() and heartbeat() need no API token.
    """
    secrets = [secret] if isinstance(secret, str) else list(secret)
    keys = [signing_key(s) for s in secrets if s]
    if not keys:
        raise WebhookVerificationError("no signing secret given")
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    h = _headers(headers)
    msg_id, ts, sigs = h.get("webhook-id", ""), h.get("webhook-timestamp", ""), h.get("webhook-signature", "")
    if not (msg_id or ts or sigs):
        _verify_legacy(h, raw, keys, legacy)
        return _parse(raw)
    if not (msg_id and ts and sigs):
        raise WebhookVerificationError("missing headers: webhook-id, webhook-timestamp and webhook-signature are all required")
    try:
        sent = int(ts)
    except ValueError:
        raise WebhookVerificationError(f"webhook-timestamp is not a Unix time in seconds: {ts!r}") from None
    age = (time.time() if now is None else now) - sent
    if tolerance > 0 and age > tolerance:
        raise WebhookVerificationError(f"message timestamp too old (a replay?): sent {age:.0f}s ago")
    if tolerance > 0 and -age > tolerance:
        raise WebhookVerificationError(f"message timestamp too new: {-age:.0f}s ahead of this clock")
    signed = f"{msg_id}.{ts}.".encode() + raw
    given = []
    for s in sigs.split():
        version, _, value = s.partition(",")
        if version != "v1":
            continue  # another scheme: not ours to check
        try:
            given.append(base64.b64decode(value, validate=True))
        except binascii.Error:
            continue
    for key in keys:
        want = hmac.new(key, signed, hashlib.sha256).digest()
        if any(hmac.compare_digest(want, g) for g in given):
            return _parse(raw)
    raise WebhookVerificationError("no signature matches")


def _verify_legacy(h: Mapping[str, str], raw: bytes, keys: List[bytes], legacy: bool) -> None:
    sigs = [h.get("x-qhronos-signature", ""), h.get("x-qhronos-signature-new", "")]
    if not any(sigs):
        raise WebhookVerificationError("missing headers: expected webhook-id, webhook-timestamp and webhook-signature")
    if not legacy:
        raise WebhookVerificationError("only X-Qhronos-Signature, which cannot refuse a replay (see legacy=True)")
    for key in keys:
        want = hmac.new(key, raw, hashlib.sha256).hexdigest()
        if any(s and hmac.compare_digest(want, s.strip().lower()) for s in sigs):
            return
    raise WebhookVerificationError("no signature matches: X-Qhronos-Signature")
