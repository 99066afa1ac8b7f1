package recurrence

import (
	"errors"
	"testing"
	"time"
)

// maxWindowCost is the most candidates one expansion of a window up to a
// day long may examine, whatever the rule: the cost of the windows the
// product asks about all the time (a calendar's day, "is t an instant",
// the expander's next window) must follow the window, not the rule's
// sparsity. 4 days × 86,400 seconds bounds a sub-daily rule's scan of the
// day with its DST look-back and look-ahead.
const maxWindowCost = 4 * 86400

// spentBy expands like Expand and returns how many candidates it examined.
func spentBy(r *Rule, from, to time.Time, limit int) (int, error) {
	out := newSeries(from.UTC(), to.UTC(), limit, false)
	b := newBudget(r.limits.MaxIterations)
	err := r.src.expand(&out, b)
	return b.total - b.left, err
}

// FuzzExpansionCost fails when one expansion of a window up to a day long
// examines more than maxWindowCost candidates, or when an open-ended
// preview is cut by anything but the budget. Seeds in
// testdata/fuzz/FuzzExpansionCost hold the worst shapes found so far.
func FuzzExpansionCost(f *testing.F) {
	for _, seed := range []string{
		"FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=23;BYMINUTE=59;BYSECOND=59",
		"FREQ=YEARLY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23;BYMINUTE=0,10,20,30,40,50;BYSECOND=0,30",
		"FREQ=SECONDLY;INTERVAL=7;BYSECOND=0,1,2",
		"FREQ=MINUTELY;INTERVAL=1439;BYHOUR=3",
		"FREQ=YEARLY;BYWEEKNO=-1;BYDAY=MO;BYSETPOS=-1",
	} {
		f.Add(seed, "Europe/Prague", 400, 3)
	}
	f.Fuzz(func(t *testing.T, text, zone string, days, hours int) {
		r, err := Compile(Spec{StartTime: fuzzStart, Timezone: zone, RRule: text}, Limits{MaxIterations: 10 * maxWindowCost})
		if err != nil {
			fuzzCompileError(t, err)
			return
		}
		at := fuzzStart.AddDate(0, 0, days%40000).Add(time.Duration(hours%24) * time.Hour)
		for _, w := range []struct {
			from, to time.Time
			limit    int
		}{
			{at, at.Add(24 * time.Hour), 1},                          // a calendar's day
			{at, at.Add(24 * time.Hour), 100000},                     // a day's planning window
			{at.Add(-time.Microsecond), at.Add(time.Microsecond), 2}, // "is at an instant"
		} {
			n, err := spentBy(r, w.from, w.to, w.limit)
			if n > maxWindowCost || errors.Is(err, ErrIterationBudget) {
				t.Fatalf("%q over [%s, %s) limit %d examined %d candidates (max %d): %v", text, w.from, w.to, w.limit, n, maxWindowCost, err)
			}
		}
		if _, err := spentBy(r, at, maxInstant, 50); err != nil && !errors.Is(err, ErrIterationBudget) {
			t.Fatalf("%q: preview failed: %v", text, err)
		}
	})
}
