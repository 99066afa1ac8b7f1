package planner

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

var t0 = time.Date(2031, 3, 3, 9, 0, 0, 0, time.UTC) // a Monday

func daily(t *testing.T, zone string) *recurrence.Rule {
	t.Helper()
	rule, err := recurrence.Compile(recurrence.Spec{StartTime: t0, Timezone: zone, RRule: "FREQ=DAILY"},
		recurrence.DefaultLimits())
	require.NoError(t, err)
	return rule
}

// weekends blocks Saturdays and Sundays (UTC): a stand-in for a compiled
// calendar in these pure tests.
type weekends struct{}

func (weekends) Blocks(t time.Time) bool {
	wd := t.UTC().Weekday()
	return wd == time.Saturday || wd == time.Sunday
}

func plan(t *testing.T, s *Series, now time.Time, lookahead time.Duration) []model.Planned {
	t.Helper()
	w := Window{CatchUp: time.Hour, Lookahead: lookahead, MaxRows: 1000}
	p, err := w.Next(s, nil, now)
	require.NoError(t, err)
	return p.Rows
}

func day(n int) time.Time { return t0.AddDate(0, 0, n) }

func TestJitterIsDeterministicAndInsideTheWindow(t *testing.T) {
	s := &Series{Rule: daily(t, "UTC"), EventID: "e1", Jitter: 5 * time.Minute}
	a := plan(t, s, t0.Add(-time.Minute), 10*24*time.Hour)
	b := plan(t, &Series{Rule: s.Rule, EventID: "e1", Jitter: 5 * time.Minute}, t0.Add(-time.Minute), 10*24*time.Hour)
	require.Equal(t, a, b, "every instance plans the same instants")
	spread := map[time.Duration]bool{}
	for i, r := range a {
		off := r.At.Sub(day(i))
		require.True(t, off >= 0 && off < 5*time.Minute, "instant %d jittered by %s", i, off)
		spread[off] = true
	}
	require.Greater(t, len(spread), 5, "instants spread inside the window")
	other := plan(t, &Series{Rule: s.Rule, EventID: "e2", Jitter: 5 * time.Minute}, t0.Add(-time.Minute), 24*time.Hour)
	require.NotEqual(t, a[0].At, other[0].At, "another event spreads differently")
}

func TestCalendarSkipsOrRolls(t *testing.T) {
	// 2031-03-08 and 09 are a weekend.
	now := t0.Add(-time.Minute)
	for _, tt := range []struct {
		policy string
		want   map[int]string // day → what its row is
	}{
		{model.CalendarSkip, map[int]string{5: "skipped/calendar@5", 6: "skipped/calendar@6", 7: "pending@7"}},
		// Rolling forward lands on Monday, which the series already has.
		{model.CalendarRollForward, map[int]string{5: "skipped/calendar@5", 6: "skipped/calendar@6", 7: "pending@7"}},
	} {
		t.Run(tt.policy, func(t *testing.T) {
			s := &Series{Rule: daily(t, "UTC"), Calendars: []Calendar{{Blocks: weekends{}, Policy: tt.policy}}}
			rows := plan(t, s, now, 8*24*time.Hour)
			got := map[int]string{}
			for _, r := range rows {
				d := int(r.At.Sub(t0) / (24 * time.Hour))
				got[d] = string(r.Status) + suffix(r.Reason) + "@" + itoa(d)
			}
			for d, w := range tt.want {
				require.Equal(t, w, got[d], "day %d", d)
			}
		})
	}
}

func TestWeeklyRollsToTheNearestAllowedDay(t *testing.T) {
	rule, err := recurrence.Compile(recurrence.Spec{StartTime: day(5), RRule: "FREQ=WEEKLY"}, recurrence.DefaultLimits())
	require.NoError(t, err)
	for _, tt := range []struct {
		policy string
		want   time.Time
	}{
		{model.CalendarRollForward, day(7)},  // Saturday → Monday
		{model.CalendarRollBackward, day(4)}, // Saturday → Friday
	} {
		s := &Series{Rule: rule, Calendars: []Calendar{{Blocks: weekends{}, Policy: tt.policy}}}
		rows := plan(t, s, t0.Add(-time.Minute), 7*24*time.Hour)
		require.Len(t, rows, 1)
		require.Equal(t, tt.want, rows[0].At, tt.policy)
		require.Equal(t, day(5), *rows[0].Original)
		require.Equal(t, model.OccurrencePending, rows[0].Status)
	}
	// Rolling backward into the past skips instead.
	s := &Series{Rule: rule, Calendars: []Calendar{{Blocks: weekends{}, Policy: model.CalendarRollBackward}}}
	rows := plan(t, s, day(4).Add(time.Hour), 7*24*time.Hour)
	require.Equal(t, model.OccurrenceSkipped, rows[0].Status)
	require.Equal(t, model.ReasonCalendar, rows[0].Reason)
}

func TestExceptionsAndPause(t *testing.T) {
	to := day(2).Add(30 * time.Minute)
	s := &Series{Rule: daily(t, "UTC"), SkipBefore: day(1).Add(time.Second), Exceptions: map[time.Time]model.Exception{
		day(2): {At: day(2), Action: model.ExceptionMove, To: &to},
		day(3): {At: day(3), Action: model.ExceptionSkip, Reason: "holiday", CreatedBy: "ops"},
		day(9): {At: day(9), Action: model.ExceptionMove, To: ptr(day(4).Add(time.Hour))}, // moved into the window early
	}}
	rows := plan(t, s, t0.Add(-time.Minute), 5*24*time.Hour)
	var got []string
	for _, r := range rows {
		got = append(got, r.At.Format("02T15:04")+" "+string(r.Status)+suffix(r.Reason))
	}
	require.Equal(t, []string{"03T09:00 skipped/paused", "04T09:00 skipped/paused", "05T09:30 pending",
		"06T09:00 skipped/manual", "07T09:00 pending", "07T10:00 pending"}, got)
	require.Equal(t, day(2), *rows[2].Original)
	require.Equal(t, "skipped by ops: holiday", rows[3].Note)
	require.Equal(t, day(9), *rows[5].Original)
}

func TestPreviewShowsThePlan(t *testing.T) {
	s := &Series{Rule: daily(t, "UTC"), Calendars: []Calendar{{Blocks: weekends{}, Policy: model.CalendarSkip}},
		Exceptions: map[time.Time]model.Exception{day(1): {At: day(1), Action: model.ExceptionSkip}}}
	rows, err := s.Preview(t0, 4)
	require.NoError(t, err)
	require.Len(t, rows, 4)
	require.Equal(t, []time.Time{day(1), day(2), day(3), day(4)}, []time.Time{rows[0].At, rows[1].At, rows[2].At, rows[3].At})
	require.Equal(t, model.ReasonManual, rows[0].Reason)
	require.Equal(t, model.OccurrencePending, rows[1].Status)
}

func TestPlansFindsPlannedInstantsOnly(t *testing.T) {
	s := &Series{Rule: daily(t, "UTC"), EventID: "e", Jitter: time.Minute}
	rows := plan(t, s, t0.Add(-time.Minute), 24*time.Hour)
	ok, err := s.Plans(rows[0].At)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = s.Plans(t0)
	require.NoError(t, err)
	require.Equal(t, rows[0].At.Equal(t0), ok, "the nominal instant is not planned once jittered")
}

func ptr[T any](v T) *T { return &v }

func suffix(reason string) string {
	if reason == "" {
		return ""
	}
	return "/" + reason
}

func itoa(n int) string { return strconv.Itoa(n) }

// next_run_at (the plan's After, when no row in the window fires) is the
// next instant that will fire: never one a calendar or an exception skips.
func TestNextRunSkipsWhatWillNotFire(t *testing.T) {
	rule, err := recurrence.Compile(recurrence.Spec{StartTime: t0, Timezone: "UTC", RRule: "FREQ=DAILY;BYDAY=MO,SA"},
		recurrence.DefaultLimits())
	require.NoError(t, err)
	w := Window{CatchUp: time.Hour, Lookahead: 24 * time.Hour, MaxRows: 1000}
	now := t0.Add(time.Hour) // Monday's instant passed; next readings: Saturday (blocked), Monday
	p, err := w.Next(&Series{Rule: rule, Calendars: []Calendar{{Blocks: weekends{}, Policy: model.CalendarSkip}}}, nil, now)
	require.NoError(t, err)
	require.NotNil(t, p.After)
	require.Equal(t, day(7), *p.After, "the blocked Saturday is not next_run_at")

	plain, err := w.Next(&Series{Rule: rule}, nil, now)
	require.NoError(t, err)
	require.Equal(t, day(5), *plain.After, "without the calendar Saturday fires")

	skipSat := map[time.Time]model.Exception{day(5): {At: day(5), Action: model.ExceptionSkip}}
	p, err = w.Next(&Series{Rule: rule, Exceptions: skipSat}, nil, now)
	require.NoError(t, err)
	require.Equal(t, day(7), *p.After, "a skipped instant is not next_run_at")
}

// Every instance was down for a week: the daily instants that fell behind
// the catch-up window are recorded missed (a weekend a calendar blocks
// stays skipped), the ones inside the window are planned to fire, and the
// cursor moves on.
func TestInstantsBehindTheCatchUpWindowAreRecordedMissed(t *testing.T) {
	s := &Series{Rule: daily(t, "UTC"), Calendars: []Calendar{{Blocks: weekends{}, Policy: model.CalendarSkip}}}
	w := Window{CatchUp: time.Hour, Lookahead: 24 * time.Hour, MaxRows: 1000}
	cursor := t0.Add(-time.Minute) // planned up to Monday 09:00, then down
	now := day(7).Add(30 * time.Minute)
	p, err := w.Next(s, &cursor, now)
	require.NoError(t, err)
	got := map[int]string{}
	for _, r := range p.Rows {
		got[int(r.At.Sub(t0)/(24*time.Hour))] = string(r.Status) + suffix(r.Reason)
	}
	require.Equal(t, map[int]string{0: "missed/catch_up_window", 1: "missed/catch_up_window", 2: "missed/catch_up_window",
		3: "missed/catch_up_window", 4: "missed/catch_up_window", 5: "skipped/calendar", 6: "skipped/calendar",
		7: "pending", 8: "pending"}, got, "Monday 09:00 of the next week is 30 minutes late: inside the window, it fires")
	require.Contains(t, p.Rows[0].Note, "older than the catch-up window of 1h0m0s")

	// An every-minute job down for a day records at most MaxMissedRows,
	// the last saying more were not recorded.
	minutely, err := recurrence.Compile(recurrence.Spec{StartTime: t0, Timezone: "UTC", RRule: "FREQ=MINUTELY"},
		recurrence.DefaultLimits())
	require.NoError(t, err)
	cursor = t0
	p, err = w.Next(&Series{Rule: minutely}, &cursor, t0.Add(25*time.Hour))
	require.NoError(t, err)
	var missed []model.Planned
	for _, r := range p.Rows {
		if r.Status == model.OccurrenceMissed {
			missed = append(missed, r)
		}
	}
	require.Len(t, missed, MaxMissedRows)
	require.Equal(t, t0, missed[0].At, "the outage's first instants")
	require.Contains(t, missed[len(missed)-1].Note, "later instants before 2031-03-04T09:00:00Z are not recorded")

	// A cursor inside the window records nothing missed.
	cursor = now.Add(-time.Minute)
	p, err = w.Next(s, &cursor, now)
	require.NoError(t, err)
	for _, r := range p.Rows {
		require.NotEqual(t, model.OccurrenceMissed, r.Status)
	}
}
