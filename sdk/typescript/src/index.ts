export { Qhronos, Events, MAX_BATCH, Occurrences, Schedules, Calendars, Endpoints, Tokens, NotificationChannels, ConcurrencyKeys, Topics, Subscriptions, PortalLinks } from "./client.js";
export type { CallOptions, ClientOptions, Request, Answer } from "./transport.js";
export {
  APIError,
  BadRequestError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  PreconditionFailedError,
  RateLimitError,
  UnavailableError,
} from "./errors.js";
export { verifyDelivery, signingKey, DeliveryRun, WebhookVerificationError } from "./webhooks.js";
export type { Delivery, ReceivedDelivery, RunOptions, VerifyOptions } from "./webhooks.js";
export { subscribe } from "./websocket.js";
export type { Subscription, Frame, Connection } from "./websocket.js";
export type * from "./types.js";
