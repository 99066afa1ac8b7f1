package recurrence

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An expansion bound to a context stops when it ends, with its error.
func TestExpandHonoursContext(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-01T00:00:00Z")
	r := mustCompile(t, Spec{StartTime: start, RRule: "FREQ=SECONDLY"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := Expand(r.WithContext(ctx), start, start.AddDate(1, 0, 0), 1<<20)
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, len(got), 2*ctxEvery, "the work stops within one context check")
	require.NotErrorIs(t, err, ErrIterationBudget)

	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0)) // long past
	defer cancel2()
	_, err = ExpandInstants(r.WithContext(expired), start, start.AddDate(1, 0, 0), 1<<20)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// The original rule is not bound.
	got, err = Expand(r, start, start.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Len(t, got, 10)
}

// A budget that runs out names the field to blame and says why.
func TestBudgetErrorNamesTheField(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-01T00:00:00Z")
	limits := Limits{MaxIterations: 5000}
	tests := []struct {
		name      string
		spec      Spec
		from      time.Time
		wantField string
		wantIn    string
	}{
		{"a COUNT series walks from DTSTART to a far window", Spec{StartTime: start, RRule: "FREQ=SECONDLY;COUNT=90000"},
			start.Add(24 * time.Hour), "after", "earlier after"},
		{"a sparse rule", Spec{StartTime: start, RRule: "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=23;BYMINUTE=59;BYSECOND=59"},
			start, "rrule", "too sparse for FREQ=SECONDLY"},
		{"a sparse schedule", Spec{StartTime: start, Schedule: &Schedule{Frequency: "minutely", ByMonthDay: []int{29}, ByMonth: []int{2}, ByDay: []string{"MO"}, ByHour: []int{23}, ByMinute: []int{59}}},
			start, "schedule", "too sparse for FREQ=MINUTELY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Compile(tt.spec, Limits{})
			require.NoError(t, err)
			r.limits = limits.withDefaults()
			_, err = Expand(r, tt.from, maxInstant, 1000)
			require.ErrorIs(t, err, ErrIterationBudget)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tt.wantField, fe.Field, err.Error())
			require.Contains(t, fe.Reason, tt.wantIn)
		})
	}
}

// A rule that finds no instance within the budget is refused at compile,
// after bounded work, naming the field.
func TestCompileRefusesTooSparse(t *testing.T) {
	t.Parallel()
	_, err := Compile(Spec{StartTime: utc("2027-01-01T00:00:00Z"), RRule: "FREQ=SECONDLY;BYYEARDAY=59;BYMONTHDAY=1"}, Limits{MaxIterations: 10000})
	var fe *FieldError
	require.True(t, errors.As(err, &fe), "got %v", err)
	require.Equal(t, "rrule", fe.Field)
	require.Contains(t, fe.Reason, "too sparse for FREQ=SECONDLY")

	_, err = Compile(Spec{StartTime: utc("2027-01-01T00:00:00Z"), RRule: "FREQ=MINUTELY;BYSECOND=0;BYSETPOS=2"}, Limits{})
	require.True(t, errors.As(err, &fe), "got %v", err)
	require.Contains(t, fe.Reason, "BYSETPOS names no position")
}
