// Package input holds what every decoder of client input shares: the error
// that names the offending field and carries the HTTP status it deserves,
// and strict decoding of JSON members. The API and the events service both
// produce these errors; the API's one error mapper turns them into answers.
package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Error is an answer with a status code, a message safe to show and, for
// validation failures, the offending field.
type Error struct {
	Status  int
	Message string
	Field   string
}

func (e *Error) Error() string { return e.Message }

func BadRequest(field, reason string) *Error {
	msg := reason
	if field != "" {
		msg = field + ": " + reason
	}
	return &Error{Status: http.StatusBadRequest, Message: msg, Field: field}
}

func BadRequestf(field, format string, args ...any) *Error {
	return BadRequest(field, fmt.Sprintf(format, args...))
}

// RejectUnknown answers 400 naming the first unknown members; ignored members
// (read-only fields a client may send back) are dropped.
func RejectUnknown(members map[string]json.RawMessage, known, ignored map[string]bool) error {
	var unknown []string
	for k := range members {
		switch {
		case known[k]:
		case ignored[k]:
			delete(members, k)
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	if unknown[0] == "" {
		// A member without a name cannot be named as the field: the body is.
		return BadRequest("body", `has a member with an empty name ""`)
	}
	return BadRequestf(unknown[0], "unknown field (unknown: %s)", strings.Join(unknown, ", "))
}

// UUID reads an id given as a filter or a reference: a uuid in its
// 36-character form, any case, returned in lower case so that both stores
// (PostgreSQL's uuid type, SQLite's text) compare it alike.
func UUID(field, v string) (string, error) {
	if id, ok := CanonicalUUID(v); ok {
		return id, nil
	}
	return "", BadRequestf(field, "must be a UUID (e.g. 0193d7a4-5b2c-7def-8a90-123456789abc)")
}

// CanonicalUUID lower-cases v when it is a uuid in its 36-character form.
// uuid.Parse also takes braces and urn: prefixes, which stored ids never
// have, so only the plain form is accepted.
func CanonicalUUID(v string) (string, bool) {
	id, err := uuid.Parse(v)
	if err != nil || len(v) != 36 {
		return "", false
	}
	return id.String(), true
}

// DecodeField decodes one member into v, naming the field on failure.
func DecodeField(members map[string]json.RawMessage, name string, v any) (present bool, err error) {
	raw, ok := members[name]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, BadRequest(name, JSONReason(err))
	}
	return true, nil
}

// DecodeStrict decodes raw into v, refusing unknown members, naming field.
func DecodeStrict(raw json.RawMessage, field string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// Name the member at fault rather than the whole body.
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			name := typeErr.Field
			if field != "body" {
				name = field + "." + name
			}
			typeErr.Field = ""
			return BadRequest(name, JSONReason(typeErr))
		}
		return BadRequest(field, JSONReason(err))
	}
	return nil
}

// IsNull reports whether a member is JSON null.
func IsNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// JSONReason turns a decoding error into a short reason without Go types.
func JSONReason(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		want := typeErr.Type.Kind().String()
		switch want {
		case "slice":
			want = "an array"
		case "map", "struct", "ptr":
			want = "an object"
		case "int", "int64", "int32", "float64":
			want = "a number"
		case "string":
			want = "a string"
		case "bool":
			want = "a boolean"
		}
		if typeErr.Field != "" {
			return fmt.Sprintf("%s: must be %s, not %s", typeErr.Field, want, typeErr.Value)
		}
		return fmt.Sprintf("must be %s, not %s", want, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("malformed JSON at offset %d", syntaxErr.Offset)
	default:
		msg := strings.TrimPrefix(err.Error(), "json: ")
		return msg
	}
}

// Set makes a lookup set of member names.
func Set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// ParseDuration reads a duration member within [lo, hi], in Duration's
// forms.
func ParseDuration(field, text string, lo, hi time.Duration) (time.Duration, error) {
	d, err := Duration(text)
	if err != nil {
		return 0, BadRequestf(field, "invalid duration %q (use forms like \"30s\", \"15m\", \"2h30m\", \"1d\")", text)
	}
	if d < lo || d > hi {
		return 0, BadRequestf(field, "must be between %s and %s", lo, hi)
	}
	return d, nil
}

// day is the unit of the "d" suffix: 24 hours of elapsed time.
const day = 24 * time.Hour

var errDuration = errors.New("not a duration")

// Duration reads Go duration syntax plus a leading whole number of days:
// "30s", "15m", "1d", "1d12h", "-2d". It is the one duration syntax of the
// API and the configuration, so a limit documented in days can be written
// in days wherever a duration is taken.
func Duration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	sign := time.Duration(1)
	rest := s
	if strings.HasPrefix(rest, "-") || strings.HasPrefix(rest, "+") {
		if rest[0] == '-' {
			sign = -1
		}
		rest = rest[1:]
	}
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 || digits >= len(rest) || rest[digits] != 'd' {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, errDuration
		}
		return d, nil
	}
	days, err := strconv.ParseInt(rest[:digits], 10, 64)
	if err != nil || days > int64(math.MaxInt64/day) {
		return 0, errDuration
	}
	total := time.Duration(days) * day
	if tail := rest[digits+1:]; tail != "" {
		if tail[0] == '-' || tail[0] == '+' {
			return 0, errDuration
		}
		d, err := time.ParseDuration(tail)
		if err != nil || d > math.MaxInt64-total {
			return 0, errDuration
		}
		total += d
	}
	return sign * total, nil
}
