package events

import (
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// When is an instant as a client wrote it in a field: RFC 3339, or the
// natural-language and relative forms start_time takes ("in 2 hours",
// "tomorrow at 9am"). It is resolved by whoever knows the zone it is read
// in (the event's, where one applies) and the clock; every instant field
// goes through the same parser, recurrence.ParseInstant.
type When struct {
	Field string
	Text  string
}

// Resolve reads the instant in loc against now, rounded up to the stored
// precision. Errors name the field.
func (w When) Resolve(loc *time.Location, now time.Time) (time.Time, error) {
	t, err := recurrence.ParseInstant(w.Field, w.Text, loc, now)
	if err != nil {
		return t, err
	}
	return model.RoundUp(t), nil
}

// Location is the event's zone (UTC when it names none or an unknown one,
// which validation refuses before it is stored).
func Location(ev *model.Event) *time.Location {
	if loc, err := time.LoadLocation(ev.Timezone); err == nil && ev.Timezone != "" {
		return loc
	}
	return time.UTC
}

// ExceptionInput is an exception as sent: {at, action, to, reason}.
type ExceptionInput struct {
	At     When
	Action string
	To     *When
	Reason string
}
