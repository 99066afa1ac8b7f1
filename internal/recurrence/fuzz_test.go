package recurrence

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// fuzzWindow expands a compiled rule over a few windows and checks the
// invariants; a rule that takes seconds is reported as a hang.
func fuzzWindow(t *testing.T, r *Rule, start time.Time) {
	began := time.Now()
	for _, from := range []time.Time{start.Add(-time.Hour), start.AddDate(3, 1, 0), start.AddDate(40, 0, 0)} {
		to := from.AddDate(0, 2, 0)
		got, err := Expand(r, from, to, 500)
		if err != nil {
			continue // budget exhausted is a legal, bounded outcome
		}
		checkInstants(t, "fuzz", got, from, to, r.Start(), 500)
		planned, err := ExpandInstants(r, from, to, 500)
		if err != nil {
			continue
		}
		var ats, fired []time.Time
		for _, in := range planned {
			ats = append(ats, in.At)
			if !in.Skipped {
				fired = append(fired, in.At)
			}
		}
		checkInstants(t, "fuzz planned", ats, from, to, r.Start(), 500)
		// Skipped readings count against the limit, so the firing ones are
		// a prefix of Expand's, all of it when the limit was not reached.
		if len(fired) > len(got) || !slices.EqualFunc(got[:len(fired)], fired, time.Time.Equal) ||
			(len(planned) < 500 && len(fired) != len(got)) {
			t.Fatalf("ExpandInstants' firing instants %v disagree with Expand %v", fired, got)
		}
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("expansion took %s: unbounded work", d)
	}
}

// fuzzCompileError fails unless err is a *FieldError.
func fuzzCompileError(t *testing.T, err error) {
	if _, ok := err.(*FieldError); !ok {
		t.Fatalf("error %v is not a *FieldError", err)
	}
}

var fuzzStart = time.Date(2027, 3, 14, 1, 30, 0, 0, time.UTC)

func FuzzRRule(f *testing.F) {
	for _, seed := range []string{"FREQ=DAILY", "RRULE:FREQ=MONTHLY;BYDAY=-1FR;COUNT=5", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
		"RRULE:FREQ=HOURLY;INTERVAL=5;BYHOUR=1,3\nEXDATE:20270314T013000Z", "FREQ=MINUTELY;INTERVAL=90;BYHOUR=9,10"} {
		f.Add(seed, "America/New_York", "", "")
	}
	f.Add("FREQ=MINUTELY;INTERVAL=25;COUNT=40", "America/New_York", GapShift, RepeatBoth)
	f.Add("FREQ=DAILY;BYHOUR=0;BYMINUTE=30", "America/Santiago", GapSkip, RepeatLast)
	f.Fuzz(func(t *testing.T, text, zone, gap, repeat string) {
		r, err := Compile(Spec{StartTime: fuzzStart, Timezone: zone, RRule: text, DST: DST{Gap: gap, Repeat: repeat}}, Limits{MaxIterations: 20000})
		if err != nil {
			fuzzCompileError(t, err)
			return
		}
		fuzzWindow(t, r, fuzzStart)
	})
}

func FuzzSchedule(f *testing.F) {
	f.Add("monthly", 1, "-1FR", 0, 0, 0, 0, 0, "", "")
	f.Add("yearly", 2, "", 29, 2, 9, 0, 10, "", "")
	f.Add("minutely", 7, "MO", 0, 0, 3, 0, 0, "", "")
	f.Add("monthly", 1, "MO,TU,WE,TH,FR", 0, 0, 0, -1, 0, "", "")
	f.Add("daily", 1, "", 0, 0, 2, 0, 5, GapShift, RepeatBoth)
	f.Add("minutely", 15, "", 0, 10, 0, 0, 0, GapSkip, RepeatLast)
	f.Fuzz(func(t *testing.T, freq string, interval int, byDay string, monthDay, month, hour, setPos, count int, gap, repeat string) {
		s := Schedule{Frequency: freq, Interval: interval}
		if byDay != "" {
			s.ByDay = strings.Split(byDay, ",")
		}
		for _, p := range []struct {
			v    int
			list *[]int
		}{{monthDay, &s.ByMonthDay}, {month, &s.ByMonth}, {hour, &s.ByHour}, {setPos, &s.BySetPos}} {
			if p.v != 0 {
				*p.list = []int{p.v}
			}
		}
		if count != 0 {
			s.Count = &count
		}
		spec := Spec{StartTime: fuzzStart, Timezone: "Australia/Lord_Howe", Schedule: &s, DST: DST{Gap: gap, Repeat: repeat}}
		r, err := Compile(spec, Limits{MaxIterations: 20000})
		if err != nil {
			fuzzCompileError(t, err)
			return
		}
		fuzzWindow(t, r, fuzzStart)
	})
}

func FuzzCron(f *testing.F) {
	for _, seed := range []string{"*/15 * * * *", "0 9 * * MON-FRI", "30 2 * * *", "@every 90m", "0 0 29 2 *", "5 4 1-7 * 1", "@yearly"} {
		f.Add(seed, "Europe/Prague", "", "")
	}
	f.Add("*/10 0 * * *", "America/Santiago", GapShift, RepeatBoth)
	f.Add("30 23 * * *", "America/Santiago", GapSkip, RepeatLast)
	f.Fuzz(func(t *testing.T, text, zone, gap, repeat string) {
		r, err := Compile(Spec{StartTime: fuzzStart, Timezone: zone, Cron: text, DST: DST{Gap: gap, Repeat: repeat}}, Limits{MaxIterations: 20000})
		if err != nil {
			fuzzCompileError(t, err)
			return
		}
		fuzzWindow(t, r, fuzzStart)
	})
}

func FuzzStartTime(f *testing.F) {
	for _, seed := range []string{"in 30 minutes", "tomorrow at 9am", "next friday at 3pm", "2027-01-01T00:00:00Z", "noon", "in 1h30m", "today at 17:30", "7 days ago"} {
		f.Add(seed)
	}
	now := time.Date(2026, 11, 21, 15, 42, 0, 0, time.UTC)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ParseStartTime(text, ny, now)
		if err != nil {
			if _, ok := err.(*FieldError); !ok {
				t.Fatalf("error %v is not a *FieldError", err)
			}
			return
		}
		if got.IsZero() {
			t.Fatalf("ParseStartTime(%q) returned the zero time without an error", text)
		}
	})
}
