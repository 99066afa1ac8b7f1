package actions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/tracing"
)

// deliver sends one prepared request and turns what happened into an Outcome.
// It is the one place where HTTP answers and transport errors are classified,
// so webhook and apicall report failures the same way. client sends it: the
// configured one, or an endpoint's (carrying its authentication).
// The request sent is recorded with the outcome (see record), hints saying
// where its parts came from.
func (c HTTPConfig) deliver(ctx context.Context, req Request, client *http.Client, hints recordHints, build func(ctx context.Context) (*http.Request, error)) Outcome {
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	// Started before the deadline is set: an attempt that ran into its
	// deadline reports at least its timeout (started after, it could read
	// a hair less).
	start := c.Now()
	ctx, cancel := withinTimeout(ctx, timeout)
	defer cancel()

	httpReq, err := build(ctx)
	if err != nil {
		return Outcome{Err: err}
	}
	// The receiver's spans join the attempt's trace (unless the event opted out).
	tracing.Inject(ctx, httpReq.Header)
	setRunHeader(httpReq.Header, req.Run)
	sent := c.record(httpReq, hints)
	hideRunToken(sent, req.Run)
	resp, err := client.Do(httpReq)
	if err != nil {
		out := classifyTransportError(ctx, err, timeout)
		out.Duration = c.Now().Sub(start)
		out.Request = sent
		return out
	}
	defer resp.Body.Close()

	excerpt, truncated := "", false
	if resp.ContentLength != 0 { // an empty answer, most receivers': nothing to read or keep
		excerpt, truncated = readExcerpt(resp.Body, resp.Header.Get("Content-Encoding"), c.ExcerptLimit)
	}
	out := classifyStatus(resp.StatusCode)
	if resp.StatusCode == http.StatusUnauthorized && req.Target != nil && req.Target.RetryUnauthorized {
		// The client dropped a token the receiver refused; the next
		// attempt fetches a fresh one and may well pass.
		out.Retryable = true
	}
	out.Excerpt, out.Truncated = excerpt, truncated
	if ra, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), c.Now()); ok {
		out.RetryAfter = ra
	}
	out.Duration = c.Now().Sub(start)
	out.Request = sent
	return out
}

// classifyStatus maps a received HTTP status to an Outcome. 2xx succeeds.
// Redirects are never followed, so a 3xx is a failure worth retrying (the
// receiver may be moving); 408, 429 and 5xx are transient; 410 means the
// receiver is gone for good; other 4xx are permanent, although the dispatcher
// may still retry them when the event asks for retry_4xx.
func classifyStatus(code int) Outcome {
	out := Outcome{StatusCode: code}
	switch {
	case code >= 200 && code <= 299:
		return out
	case code >= 300 && code <= 399:
		out.Err = fmt.Errorf("receiver answered %d (redirects are not followed)", code)
		out.Retryable = true
	case code == http.StatusGone:
		out.Err = fmt.Errorf("receiver answered %d (gone)", code)
		out.Gone = true
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests:
		out.Err = fmt.Errorf("receiver answered %d", code)
		out.Retryable = true
	case code >= 400 && code <= 499:
		out.Err = fmt.Errorf("receiver answered %d", code)
	default:
		out.Err = fmt.Errorf("receiver answered %d", code)
		out.Retryable = true
	}
	return out
}

// classifyTransportError maps a failure before any HTTP answer. A policy
// refusal is permanent; everything else (refused or reset connections, DNS,
// TLS, timeouts) may pass later. The URL is left out of the message: it may
// carry credentials.
func classifyTransportError(ctx context.Context, err error, timeout time.Duration) Outcome {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var blocked *outbound.BlockedError
	if errors.As(err, &blocked) {
		return Outcome{Err: fmt.Errorf("send request: %w", blocked)}
	}
	if timedOut(ctx, err) {
		return Outcome{Err: fmt.Errorf("send request: timed out after %s: %w", timeout, context.DeadlineExceeded), Retryable: true}
	}
	return Outcome{Err: fmt.Errorf("send request: %w", err), Retryable: true}
}
