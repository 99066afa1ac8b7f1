package recurrence

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A compiled Rule is shared by the expander, the dispatcher and the preview
// endpoint; run with -race to prove it is safe for concurrent use.
func TestRuleIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-04T09:00:00Z")
	for _, spec := range []Spec{
		{StartTime: start, Timezone: "Europe/Prague", RRule: "FREQ=DAILY;COUNT=50"},
		{StartTime: start, Timezone: "Europe/Prague", RRule: "FREQ=WEEKLY;BYDAY=MO,WE,FR"},
		{Timezone: "America/New_York", Cron: "*/10 * * * *"},
	} {
		r := mustCompile(t, spec)
		from, to := start, start.AddDate(0, 2, 0)
		want := mustExpand(t, r, from, to, 10000)
		var wg sync.WaitGroup
		results := make([][]time.Time, 8)
		for i := range results {
			wg.Go(func() {
				got, err := Expand(r, from, to, 10000)
				if err == nil {
					results[i] = got
				}
			})
		}
		wg.Wait()
		for _, got := range results {
			require.Equal(t, formatAll(want), formatAll(got), "concurrent expansion of %+v", spec)
		}
	}
}
