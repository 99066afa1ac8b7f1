"""Qhronos: a client of the Qhronos scheduler API and verify_delivery for the
receiving side, with nothing outside the standard library.

    import qhronos
    client = qhronos.Client("http://127.0.0.1:8080", token="...")
    event = client.events.create(name="ping", start_time="in 1 minute", webhook="https://example.com/hooks")
    print(event["id"])
"""
from . import types
from ._transport import Page
from ._websocket import Connection, HandshakeError
from .client import (MAX_BATCH, Calendars, Client, ConcurrencyKeys, Endpoints, Events, NotificationChannels,
                     Occurrences, PortalLinks, Schedules, Subscriptions, Tokens, Topics)
from .errors import (APIError, BadRequestError, Cancelled, ConflictError, ForbiddenError, NotFoundError,
                     PreconditionFailedError, QhronosError, RateLimitError, UnauthorizedError, UnavailableError)
from .webhooks import DEFAULT_TOLERANCE, Delivery, DeliveryRun, WebhookVerificationError, signing_key, verify_delivery

__version__ = "0.1.0"

__all__ = [
    "APIError", "BadRequestError", "Calendars", "Cancelled", "Client", "ConcurrencyKeys", "ConflictError", "Connection",
    "DEFAULT_TOLERANCE", "Delivery", "DeliveryRun", "Endpoints", "Events", "ForbiddenError", "HandshakeError", "MAX_BATCH",
    "NotFoundError",
    "NotificationChannels", "Occurrences", "Page", "PortalLinks", "PreconditionFailedError", "QhronosError",
    "RateLimitError",
    "Schedules", "Subscriptions", "Tokens", "Topics", "UnauthorizedError", "UnavailableError",
    "WebhookVerificationError", "signing_key", "types", "verify_delivery",
]
