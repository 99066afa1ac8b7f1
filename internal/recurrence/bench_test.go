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

// BenchmarkWorstShapes measures the costliest shapes found for issue #23
// (by hand and with FuzzExpansionCost) under the default limits: the CPU of
// one request is bounded by the candidate budget. candidates/op is the
// budget spent by one expansion (or the compile probe). Figures are in
// BENCHMARKS.md.
func BenchmarkWorstShapes(b *testing.B) {
	start := utc("2026-11-25T21:00:00Z")
	sparse := "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=23;BYMINUTE=59;BYSECOND=59"
	everyMinute := "FREQ=YEARLY;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23;" +
		"BYMINUTE=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37," +
		"38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59"
	day := utc("2031-10-17T00:00:00Z")
	noon := utc("2031-11-25T11:00:00Z")
	cases := []struct {
		name, rule string
		from, to   time.Time
		limit      int
		compile    bool
	}{
		{"compile/sparse_secondly", sparse, time.Time{}, time.Time{}, 0, true},
		{"compile/never_refused_after_full_budget", "FREQ=SECONDLY;BYYEARDAY=59;BYMONTHDAY=1", time.Time{}, time.Time{}, 0, true},
		{"preview_1000/sparse_secondly", sparse, start, maxInstant, 1000, false},
		{"calendar_day/sparse_secondly", sparse, day, day.AddDate(0, 0, 1), 1, false},
		// DTSTART's month and day: 1,440 instants on 25 November, the
		// window starts at noon of it, so the morning is skipped unread.
		{"one_day/yearly_every_minute_from_noon", everyMinute, noon, noon.AddDate(0, 0, 1), 100000, false},
		{"preview_1000/count_walks_a_day_from_dtstart", "FREQ=SECONDLY;COUNT=100000", start.Add(24 * time.Hour), maxInstant, 1000, false},
		{"preview_1000/weekno_setpos", "FREQ=YEARLY;BYWEEKNO=-1,1;BYDAY=MO,SU;BYSETPOS=-1", start, maxInstant, 1000, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			spec := Spec{StartTime: start, Timezone: "Europe/Prague", RRule: c.rule}
			if c.compile {
				var err error
				for b.Loop() {
					_, err = Compile(spec, Limits{})
				}
				b.ReportMetric(0, "candidates/op")
				b.Logf("%s: %v", c.rule, err)
				return
			}
			r := mustCompile(b, spec)
			var n int
			var err error
			for b.Loop() {
				n, err = spentBy(r, c.from, c.to, c.limit)
			}
			b.ReportMetric(float64(n), "candidates/op")
			if err != nil {
				b.Logf("%v", err)
			}
		})
	}
}
