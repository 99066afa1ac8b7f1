package recurrence

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseStartTime(t *testing.T) {
	t.Parallel()
	prague := mustLoc(t, "Europe/Prague")
	now := utc("2026-11-21T15:42:00Z") // Saturday 16:42 in Prague
	tests := []struct {
		text string
		want string
	}{
		{"2026-12-24T09:00:00+01:00", "2026-12-24T08:00:00Z"},
		{"2026-12-24T09:00:00.25Z", "2026-12-24T09:00:00.25Z"},
		{"2026-12-24 09:00", "2026-12-24T08:00:00Z"},
		{"2026-12-24T09:00:00", "2026-12-24T08:00:00Z"},
		{"now", "2026-11-21T15:42:00Z"},
		{"in 30 minutes", "2026-11-21T16:12:00Z"},
		{"In 2 hours", "2026-11-21T17:42:00Z"},
		{"in an hour", "2026-11-21T16:42:00Z"},
		{"in 1h30m", "2026-11-21T17:12:00Z"},
		{"in 1 hour and 15 min", "2026-11-21T16:57:00Z"},
		{"in 45s", "2026-11-21T15:42:45Z"},
		{"in 2 days", "2026-11-23T15:42:00Z"},
		{"in 1 week", "2026-11-28T15:42:00Z"},
		{"7 days ago", "2026-11-14T15:42:00Z"},
		{"2 hours ago", "2026-11-21T13:42:00Z"},
		{"30m ago", "2026-11-21T15:12:00Z"},
		{"1 week and 2 hours ago", "2026-11-14T13:42:00Z"},
		{"tomorrow at 9am", "2026-11-22T08:00:00Z"},
		{"Tomorrow 9:30 PM", "2026-11-22T20:30:00Z"},
		{"9am tomorrow", "2026-11-22T08:00:00Z"},
		{"tomorrow", "2026-11-22T15:42:00Z"},
		{"next friday at 3pm", "2026-11-27T14:00:00Z"},
		{"friday at 3pm", "2026-11-27T14:00:00Z"},
		{"on fri at 15:00", "2026-11-27T14:00:00Z"},
		{"next saturday", "2026-11-28T15:42:00Z"},
		{"saturday at 17:00", "2026-11-21T16:00:00Z"},
		{"saturday at 9am", "2026-11-28T08:00:00Z"},
		{"monday", "2026-11-23T15:42:00Z"},
		{"today at 17:30", "2026-11-21T16:30:00Z"},
		{"at 9am", "2026-11-22T08:00:00Z"},
		{"at 5pm", "2026-11-21T16:00:00Z"},
		{"12am", "2026-11-21T23:00:00Z"},
		{"noon", "2026-11-22T11:00:00Z"},
		{"tomorrow at noon", "2026-11-22T11:00:00Z"},
		{"midnight", "2026-11-21T23:00:00Z"},
	}
	for _, tt := range tests {
		got, err := ParseStartTime(tt.text, prague, now)
		require.NoError(t, err, tt.text)
		require.Equal(t, tt.want, got.UTC().Format(time.RFC3339Nano), "ParseStartTime(%q): got, want", tt.text)
	}
}

func TestParseStartTimeNeverEarlyInAGap(t *testing.T) {
	t.Parallel()
	ny := mustLoc(t, "America/New_York")
	got, err := ParseStartTime("tomorrow at 2:30am", ny, utc("2027-03-13T12:00:00Z"))
	require.NoError(t, err)
	require.Equal(t, "2027-03-14T07:30:00Z", got.UTC().Format(time.RFC3339), "02:30 does not exist; read with EST it is 03:30 EDT")
	got, err = ParseStartTime("tomorrow at 1:30am", ny, utc("2027-11-06T12:00:00Z"))
	require.NoError(t, err)
	require.Equal(t, "2027-11-07T05:30:00Z", got.UTC().Format(time.RFC3339), "a repeated time means its first occurrence")
}

func TestParseStartTimeRejects(t *testing.T) {
	t.Parallel()
	now := utc("2026-11-21T15:42:00Z")
	for _, text := range []string{"", "whenever", "tomorrow tomorrow", "25:00", "in", "in 3 fortnights", "next", "next month",
		"at 13pm", "9", "2026-13-01", strings.Repeat("in 1 hour ", 500)} {
		_, err := ParseStartTime(text, time.UTC, now)
		var fe *FieldError
		require.ErrorAs(t, err, &fe, "ParseStartTime(%q) should fail", text)
		require.Equal(t, "start_time", fe.Field)
	}
}
