package client

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Sentinels for errors.Is; an *APIError matches the one of its status.
var (
	ErrBadRequest         = errors.New("bad request")
	ErrUnauthorized       = errors.New("unauthorized")
	ErrForbidden          = errors.New("forbidden")
	ErrNotFound           = errors.New("not found")
	ErrConflict           = errors.New("conflict")
	ErrPreconditionFailed = errors.New("precondition failed")
	ErrRateLimited        = errors.New("rate limited")
	ErrUnavailable        = errors.New("service unavailable")
)

// APIError is an error answer of the server.
type APIError struct {
	StatusCode int
	// Message is the server's "error" text, e.g. "start_time: must be in the future".
	Message string
	// Field names the offending field of a validation error ("start_time"),
	// when the server names one.
	Field string
	// RetryAfter is the delay the server asked for (429, 503), zero when none.
	RetryAfter time.Duration
	// RequestID is the server's X-Request-ID, for its logs.
	RequestID string
	// Body is the raw answer (bounded).
	Body []byte
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	return fmt.Sprintf("qhronos: %d %s", e.StatusCode, msg)
}

// Is matches the sentinel of the status code.
func (e *APIError) Is(target error) bool {
	switch e.StatusCode {
	case http.StatusBadRequest:
		return target == ErrBadRequest
	case http.StatusUnauthorized:
		return target == ErrUnauthorized
	case http.StatusForbidden:
		return target == ErrForbidden
	case http.StatusNotFound:
		return target == ErrNotFound
	case http.StatusConflict:
		return target == ErrConflict
	case http.StatusPreconditionFailed:
		return target == ErrPreconditionFailed
	case http.StatusTooManyRequests:
		return target == ErrRateLimited
	case http.StatusServiceUnavailable:
		return target == ErrUnavailable
	}
	return false
}
