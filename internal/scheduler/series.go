package scheduler

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/recurrence"
	"github.com/qhronos/qhronos/internal/repository"
)

// compileEvent turns a stored event into its recurrence rule.
func compileEvent(ev *repository.Event, limits recurrence.Limits) (*recurrence.Rule, error) {
	spec := recurrence.Spec{StartTime: ev.StartTime, Timezone: ev.Timezone}
	if ev.RRule != nil {
		spec.RRule = *ev.RRule
	}
	if ev.Cron != nil {
		spec.Cron = *ev.Cron
	}
	if len(ev.Schedule) > 0 && string(ev.Schedule) != "null" {
		var sched recurrence.Schedule
		if err := json.Unmarshal(ev.Schedule, &sched); err != nil {
			return nil, fmt.Errorf("decode schedule of event %s: %w", ev.ID, err)
		}
		spec.Schedule = &sched
	}
	rule, err := recurrence.Compile(spec, limits)
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
		if repository.RoundUp(t).Equal(at) {
			return true, nil
		}
	}
	return false, nil
}
