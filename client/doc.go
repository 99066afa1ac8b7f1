// Package client is the Go SDK of Qhronos: a typed client for every route of
// the server's OpenAPI document (/openapi.json), built on the public API only.
//
//	c, err := client.New("http://127.0.0.1:8080", client.WithToken(os.Getenv("QHRONOS_TOKEN")))
//	ev, err := c.Events.Create(ctx, client.EventInput{Name: client.Ptr("ping"),
//		StartTime: client.Ptr("in 1 minute"), Webhook: client.Ptr("https://example.com/hook")})
//	for occ, err := range c.Occurrences.All(ctx, client.ListOccurrencesParams{EventID: &ev.ID}) { … }
//
// Every method takes a context first. Failures are values: an answer of the
// server is an *APIError (status, message, the field a validation error
// names, the retry delay of a 429), and errors.Is(err, client.ErrNotFound)
// and the other sentinels test the status.
//
// Idempotent calls (GET, PUT, DELETE, POSTs carrying an Idempotency-Key, and
// the POSTs a repeat leaves as the first left them: Events.Pause, Resume and
// Backfill, Occurrences.Complete and Heartbeat, ConcurrencyKeys.Pause and
// Resume) are retried on connection errors, 429 (after its Retry-After), 502,
// 503 and 504. Events.Create and Events.Trigger send a fresh Idempotency-Key
// when the caller gives none, so their retries never create twice;
// WithRetries(0) turns both off.
//
// The receiver of a callback event's delivery (completion "callback")
// reports the end of its run with Occurrences.Complete, authenticated by
// the delivery's run token alone: client.RunToken(token).
//
// The resource types (Event, Occurrence, …) are generated from the OpenAPI
// document by oapi-codegen (types.gen.go); the calls are written by hand.
package client
