package recurrence

import (
	"testing"
	"time"

	"github.com/teambition/rrule-go"
)

// BenchmarkExpand measures instants per second for a 30-day window a year
// after DTSTART (our engine: re-anchored, DST-resolved, windowed) next to raw
// rrule-go producing a 30-day window from DTSTART on the same rule. Figures
// are recorded in BENCHMARKS.md.
func BenchmarkExpand(b *testing.B) {
	rules := []struct{ name, rule string }{
		{"minutely", "FREQ=MINUTELY"},
		{"weekly_mo_we_fr", "FREQ=WEEKLY;BYDAY=MO,WE,FR"},
		{"monthly_last_weekday", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1"},
	}
	for _, zone := range []string{"UTC", "America/New_York"} {
		loc := mustLoc(b, zone)
		start := time.Date(2027, 1, 4, 9, 0, 0, 0, loc)
		for _, rc := range rules {
			b.Run(rc.name+"/"+zone+"/ours_year_later", func(b *testing.B) {
				r := mustCompile(b, Spec{StartTime: start, Timezone: zone, RRule: rc.rule})
				from := start.AddDate(1, 0, 0)
				to := from.AddDate(0, 0, 30)
				n := 0
				for b.Loop() {
					got, err := Expand(r, from, to, 100000)
					if err != nil {
						b.Fatal(err)
					}
					n += len(got)
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "instants/s")
			})
			b.Run(rc.name+"/"+zone+"/rrule-go_from_dtstart", func(b *testing.B) {
				opt, err := rrule.StrToROption(rc.rule)
				if err != nil {
					b.Fatal(err)
				}
				opt.Dtstart = start
				r, err := rrule.NewRRule(*opt)
				if err != nil {
					b.Fatal(err)
				}
				to := start.AddDate(0, 0, 30)
				n := 0
				for b.Loop() {
					n += len(r.Between(start, to, true))
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "instants/s")
			})
		}
	}
}
