// Package receiver verifies deliveries from Qhronos: webhooks, API calls with
// sign: true, and requests that `qhronos listen` forwards.
//
// Every delivery carries the Standard Webhooks headers — webhook-id (the
// occurrence id, the same on every retry, so a receiver can deduplicate),
// webhook-timestamp (Unix seconds) and webhook-signature, one "v1,<base64>"
// HMAC-SHA256 over "id.timestamp.body" per signing secret — and the original
// Qhronos header X-Qhronos-Signature, lowercase hex HMAC-SHA256 over the raw
// body.
//
// # The key rule
//
// A secret that starts with "whsec_" is the base64 encoding of its key (the
// Standard Webhooks convention): the key is what follows the prefix,
// base64-decoded. Any other secret — and a "whsec_" secret whose rest is not
// valid base64 — is used as its own UTF-8 bytes. The server applies the same
// rule when it signs, so give the Verifier the secret exactly as you gave it
// to Qhronos (the event's hmac_secret, or the server's hmac.default_secret).
//
// # What is checked
//
// When the Standard Webhooks headers are present they decide: the timestamp
// must lie within the tolerance (5 minutes by default) of the receiver's
// clock, in either direction, so a message captured earlier and replayed is
// refused; and at least one of the v1 signatures must match one of the
// Verifier's secrets. During a secret rotation Qhronos signs with both the new
// and the previous secret, so a receiver holding either one keeps working;
// give NewVerifier both secrets while you switch.
//
// During the grace X-Qhronos-Signature carries the previous secret's
// signature (so a receiver of the original Qhronos keeps working) and
// X-Qhronos-Signature-New the new secret's; when the grace ends
// X-Qhronos-Signature switches to the new secret and X-Qhronos-Signature-New
// is no longer sent.
//
// X-Qhronos-Signature carries no timestamp, so it cannot refuse a replay. A
// request carrying only that header (a client of the original Qhronos) is
// accepted only by a Verifier built WithLegacy; it then must match one of the
// secrets, in X-Qhronos-Signature or X-Qhronos-Signature-New.
//
// Verification compares in constant time and never logs or returns a secret.
//
// # Runs of callback events
//
// The delivery of an event whose completion is "callback" starts a run: its
// Delivery.Run holds the run token (also in the Qhronos-Run-Token header),
// where to report and the deadline. Answer 2xx at once, do the work, then
// report how it ended; Heartbeat moves the deadline of long work:
//
//	d, err := receiver.ParseDelivery(body) // body verified by the Middleware
//	w.WriteHeader(http.StatusAccepted)
//	go func() {
//		ctx := context.Background()
//		rows, err := export(ctx, d)
//		if err != nil {
//			err = d.Run.Complete(ctx, receiver.RunFailed, map[string]string{"error": err.Error()})
//		} else {
//			err = d.Run.Complete(ctx, receiver.RunSucceeded, map[string]int{"rows": rows})
//		}
//	}()
//
// A run with neither a report nor a heartbeat within the event's max_runtime
// ends timed_out.
package receiver
