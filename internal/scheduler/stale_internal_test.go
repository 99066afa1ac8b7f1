package scheduler

import (
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// A paused event's rows are stale at fire time only inside the pause: a
// pause until a moment covers the instants before it.
func TestStaleReasonHonoursPausedUntil(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	until := t0.Add(time.Hour)
	for _, tc := range []struct {
		name  string
		until *time.Time
		at    time.Time
		want  string
	}{
		{"paused without until", nil, t0.Add(2 * time.Hour), model.ReasonPaused},
		{"inside the pause", &until, t0, model.ReasonPaused},
		{"at until", &until, until, ""},
		{"after until", &until, until.Add(time.Minute), ""},
	} {
		ev := &model.Event{Status: model.EventPaused, PausedUntil: tc.until}
		occ := &model.Occurrence{ScheduledAt: tc.at}
		if got := staleReason(true, ev, occ); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
