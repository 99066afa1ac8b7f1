"""Verifying Qhronos deliveries on the receiving side, with the standard
library: the Standard Webhooks headers (webhook-id, webhook-timestamp,
webhook-signature; one "v1," value per secret during a rotation) checked in
constant time with a five-minute tolerance, and the original
X-Qhronos-Signature when asked for.
"""
import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from typing import Any, Iterable, List, Mapping, Optional, TypedDict, Union

from .errors import QhronosError

#: How far a delivery's timestamp may be from this clock, as the Standard
#: Webhooks specification recommends.
DEFAULT_TOLERANCE = 300.0


class WebhookVerificationError(QhronosError):
    """The delivery is not authentic or not fresh."""


class Delivery(TypedDict):
    """The JSON body of a webhook delivery (and of a forwarded client-hook frame)."""

    event_id: str
    occurrence_id: str
    attempt: int
    name: str
    description: str
    scheduled_at: str
    dispatched_at: str
    metadata: Any
    tags: List[str]


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
        return json.loads(raw)
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
            return json.loads(raw)
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
