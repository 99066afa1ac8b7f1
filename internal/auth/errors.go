package auth

import "errors"

// ErrUnauthenticated is the root of every "who are you?" failure. Authenticate
// wraps it with a short reason that is safe to show to the caller ("token
// expired", "invalid token"…); the token itself never appears in the text.
var ErrUnauthenticated = errors.New("unauthenticated")

// ErrForbidden is the root of every "you may not" failure, so one errors.Is
// check maps them all to 403 while each keeps its own precise message.
var ErrForbidden = errors.New("forbidden")

// ErrOutsideScope is returned when an event's resulting tags are empty or not
// inside the caller's token scope. Its text is part of the API contract.
var ErrOutsideScope error = &forbiddenError{msg: "tags: outside token scope"}

// ErrAccessTooWide is returned when a caller tries to mint a token with a
// higher access level than its own.
var ErrAccessTooWide error = &forbiddenError{msg: "access: wider than the caller's own access"}

// ErrScopeTooWide is returned when a caller tries to mint a token whose scope
// is not a subset of its own.
var ErrScopeTooWide error = &forbiddenError{msg: "scope: outside token scope"}

// ErrInsufficientAccess is returned when the caller's access level is below
// what the operation needs.
var ErrInsufficientAccess error = &forbiddenError{msg: "insufficient access"}

// forbiddenError carries an exact user-facing message and unwraps to
// ErrForbidden.
type forbiddenError struct{ msg string }

func (e *forbiddenError) Error() string { return e.msg }
func (e *forbiddenError) Unwrap() error { return ErrForbidden }

// FieldError rejects an input to Mint, naming the field and the rule so the
// API can answer 400 with it.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }
