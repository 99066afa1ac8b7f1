package scheduler

import (
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// compileEvent turns a stored event into its recurrence rule.
func compileEvent(ev *model.Event, limits recurrence.Limits) (*recurrence.Rule, error) {
	rule, err := ev.Compile(limits)
	if err != nil {
		return nil, fmt.Errorf("compile schedule of event %s: %w", ev.ID, err)
	}
	return rule, nil
}

// inSeries reports whether at is an instant of rule (at is stored rounded up
// to the microsecond, so the instant may be up to 1 µs earlier).
func inSeries(rule *recurrence.Rule, at time.Time) (bool, error) {
	got, err := recurrence.Expand(rule, at.Add(-time.Microsecond), at.Add(time.Microsecond), 2)
	if err != nil {
		return false, err
	}
	for _, t := range got {
		if model.RoundUp(t).Equal(at) {
			return true, nil
		}
	}
	return false, nil
}
