package recurrence

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The four places where rrule-go (a port of python-dateutil) departs from
// RFC 5545 (issue #23). Each case fails on the plain rrule-go iteration.
func TestRFC5545WhereDateutilDeviates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, start, rule string
		want              []string
	}{
		// 1. An early-January day in the previous year's last week takes that
		// year's week count: 2039-01-02 is in week 52 of 2038 (52 weeks).
		{"BYWEEKNO=53 uses the week's own year", "2033-01-01T09:00:00Z", "FREQ=YEARLY;BYWEEKNO=53;BYDAY=SU;COUNT=3",
			[]string{"2033-01-02T09:00:00Z", "2038-01-03T09:00:00Z", "2044-01-03T09:00:00Z"}},
		{"BYWEEKNO=52 on 1 January", "2021-06-01T09:00:00Z", "FREQ=YEARLY;BYWEEKNO=52;BYDAY=SA;COUNT=2",
			[]string{"2022-01-01T09:00:00Z", "2022-12-31T09:00:00Z"}},
		// 2. Week -52 of 2025 (52 weeks) is its week 1, which starts on
		// Monday 2024-12-30.
		{"negative BYWEEKNO reaches next year's week 1", "2024-06-03T09:00:00Z", "FREQ=YEARLY;BYWEEKNO=-52;BYDAY=MO;COUNT=2",
			[]string{"2024-12-30T09:00:00Z", "2026-01-05T09:00:00Z"}},
		{"negative BYWEEKNO with BYMONTH=12", "2024-06-03T09:00:00Z", "FREQ=YEARLY;BYWEEKNO=-52;BYMONTH=12;BYDAY=MO;COUNT=2",
			[]string{"2024-12-30T09:00:00Z", "2029-12-31T09:00:00Z"}},
		// 3. The BYSETPOS set is the whole WKST week, not the part from DTSTART.
		{"WEEKLY BYSETPOS chooses in the whole week", "2027-01-07T09:00:00Z", "FREQ=WEEKLY;BYDAY=TU,TH,SA;BYSETPOS=2;COUNT=3",
			[]string{"2027-01-07T09:00:00Z", "2027-01-14T09:00:00Z", "2027-01-21T09:00:00Z"}},
		// 5 (found by the differential): dateutil intersects the plain and the
		// ordinal BYDAY values; the RFC's list is a union.
		{"BYDAY mixing plain and ordinal weekdays is their union", "2027-01-04T09:00:00Z", "FREQ=MONTHLY;BYDAY=MO,-1FR;COUNT=6",
			[]string{"2027-01-04T09:00:00Z", "2027-01-11T09:00:00Z", "2027-01-18T09:00:00Z", "2027-01-25T09:00:00Z",
				"2027-01-29T09:00:00Z", "2027-02-01T09:00:00Z"}},
		{"WEEKLY BYSETPOS with WKST=SU", "2027-01-07T09:00:00Z", "FREQ=WEEKLY;WKST=SU;BYDAY=SU,TH,SA;BYSETPOS=1;COUNT=2",
			[]string{"2027-01-10T09:00:00Z", "2027-01-17T09:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := utc(tt.start)
			r := mustCompile(t, Spec{StartTime: start, RRule: tt.rule})
			got := mustExpand(t, r, start.Add(-time.Second), maxInstant, len(tt.want)+1)
			require.Equal(t, tt.want, formatAll(got), "got instants, want RFC 5545's")
		})
	}
}

// 4. A preview reaches year 9999, not about 292 years past its start.
func TestPreviewReachesCenturiesAhead(t *testing.T) {
	t.Parallel()
	r := mustCompile(t, Spec{StartTime: utc("2030-01-01T09:00:00Z"), RRule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO"})
	got, err := Preview(r, utc("2029-12-31T00:00:00Z"), 15)
	require.NoError(t, err)
	require.Len(t, got, 15, "a leap-day Monday recurs every 28 years or so until 9999")
	require.Equal(t, "2332-02-29T09:00:00Z", got[11].UTC.Format(time.RFC3339))
	require.Equal(t, "2360-02-29T09:00:00Z", got[12].UTC.Format(time.RFC3339))
}
