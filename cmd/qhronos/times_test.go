package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// field is the value of one "NAME:  value" line of a one-resource table.
func field(t *testing.T, out, name string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in:\n%s", name, out)
	return ""
}

// An event's table shows its instants in its own zone, 24-hour with the
// offset, and says so once; a list across events uses the local zone ($TZ);
// --utc switches both. An event paused until a set time shows its next
// firing after the pause, with the pause's end and reason.
func TestTablesShowTimesInOneZoneEach(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.SQLite)
	e := serverEnv(t, srv)
	e["TZ"] = "America/New_York"
	rc := qhronostest.NewReceiver(t)
	tag := "tz-" + qhronostest.RandomHex(t, 4)
	prague, err := time.LoadLocation("Europe/Prague")
	require.NoError(t, err)
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	// 09:00 in Prague on a day well ahead, in winter (+01:00).
	start := time.Date(2031, 1, 6, 9, 0, 0, 0, prague)

	var ev client.Event
	ok(t, e, &ev, "events", "create", "--name", "prague daily", "--start", start.Format(time.RFC3339),
		"--timezone", "Europe/Prague", "--rrule", "FREQ=DAILY", "--webhook", rc.URL, "--tag", tag)

	r := cli(t, e, "", "events", "get", ev.ID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "2031-01-06 09:00:00 +01:00", field(t, r.stdout, "START"))
	require.Equal(t, "2031-01-06 09:00:00 +01:00", field(t, r.stdout, "NEXT RUN"))
	require.Equal(t, 1, strings.Count(r.stdout, "(times in Europe/Prague, the event's zone, 24-hour with the UTC offset; --utc for UTC)"), r.stdout)

	r = cli(t, e, "", "events", "get", ev.ID, "--utc")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "2031-01-06 08:00:00 +00:00", field(t, r.stdout, "START"))
	require.Contains(t, r.stdout, "(times in UTC)")

	r = cli(t, e, "", "events", "list", "--tag", tag)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, start.In(ny).Format("2006-01-02 15:04:05 -07:00"), "the list is in the local zone")
	require.Contains(t, r.stdout, "(times in America/New_York, the local zone")

	// An occurrence is one event's instant: its table is in the event's zone
	// too; the list across occurrences is in the local zone.
	r = cli(t, e, "", "events", "trigger", ev.ID)
	require.Equal(t, 0, r.code, r.stderr)
	inPrague := func(v string) bool {
		at, err := time.Parse(timeLayout, v)
		_, want := at.In(prague).Zone()
		_, got := at.Zone()
		return err == nil && got == want
	}
	require.True(t, inPrague(field(t, r.stdout, "SCHEDULED")), r.stdout)
	require.Contains(t, r.stdout, "(times in Europe/Prague, the event's zone")
	r = cli(t, e, "", "occurrences", "list", "--event", ev.ID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "(times in America/New_York, the local zone")

	// Paused until the third instant's day at noon: the next firing is the
	// fourth instant; the pause shows beside it with its reason.
	until := start.AddDate(0, 0, 2).Add(3 * time.Hour)
	ok(t, e, nil, "events", "pause", ev.ID, "--until", until.Format(time.RFC3339), "--reason", "team offsite")
	r = cli(t, e, "", "events", "get", ev.ID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "2031-01-09 09:00:00 +01:00 (paused until 2031-01-08 12:00:00 +01:00: team offsite)",
		field(t, r.stdout, "NEXT RUN"))

	// Held instants that fire on resume make the pause's end the next run.
	ok(t, e, nil, "events", "resume", ev.ID)
	ok(t, e, nil, "events", "pause", ev.ID, "--until", until.Format(time.RFC3339), "--catch-up", "fire")
	r = cli(t, e, "", "events", "get", ev.ID)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "2031-01-08 12:00:00 +01:00 (paused until 2031-01-08 12:00:00 +01:00)", field(t, r.stdout, "NEXT RUN"))

	// Paused until resumed: no next run is known.
	ok(t, e, nil, "events", "resume", ev.ID)
	ok(t, e, nil, "events", "pause", ev.ID)
	r = cli(t, e, "", "events", "get", ev.ID)
	require.Equal(t, "- (paused until resumed by hand)", field(t, r.stdout, "NEXT RUN"))
}
