package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// TestStatsPunctuality delivers an event's instant to a real receiver and
// reads it back from `qhronos stats punctuality`: the table a user sends
// on, the JSON, the groupings and the flags it refuses.
func TestStatsPunctuality(t *testing.T) {
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		rc := qhronostest.NewReceiver(t)
		tag := "punct-" + qhronostest.RandomHex(t, 4)
		start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
		var ev client.Event
		ok(t, e, &ev, "events", "create", "--name", "nightly export", "--start", start, "--webhook", rc.URL,
			"--tag", tag)

		// A busy machine may deliver late: a minute's tolerance keeps the
		// delivery on time whatever the load.
		var report client.PunctualityReport
		deadline := time.Now().Add(2 * time.Minute)
		for {
			ok(t, e, &report, "stats", "punctuality", "--tag", tag, "--tolerance", "1m")
			if report.Total.Completed == 1 || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		require.Equal(t, 1, report.Total.Completed, "the delivery is counted: %+v", report.Total)
		require.Equal(t, 1, report.Total.Due)
		require.Equal(t, 1, report.Total.OnTime)
		require.EqualValues(t, 60_000, report.ToleranceMs)
		require.Len(t, report.Groups, 1)
		require.Equal(t, "nightly export", report.Groups[0].Name)
		require.Equal(t, ev.ID, *report.Groups[0].Key)

		r := cli(t, e, "", "stats", "punctuality", "--tag", tag, "--tolerance", "1m", "--group-by", "tag")
		require.Equal(t, 0, r.code, r.stderr)
		require.Regexp(t, `(?m)^TAG\s+DUE\s+ON TIME\s+LATE`, r.stdout)
		require.Regexp(t, `(?m)^`+tag+`\s+1\s+1 \(100\.0%\)\s+0\s`, r.stdout)
		require.Regexp(t, `(?m)^all\s+1\s+1 \(100\.0%\)`, r.stdout)
		require.Contains(t, r.stdout, "on time: less than 60000 ms late")

		r = cli(t, e, "", "stats", "punctuality", "--group-by", "owner")
		require.Equal(t, exitUsage, r.code)
		require.Contains(t, r.stderr, "--group-by")
		r = cli(t, e, "", "stats", "punctuality", "--tolerance", "soon")
		require.Equal(t, exitUsage, r.code)
		r = cli(t, e, "", "stats", "punctuality", "--from", "2020-01-01T00:00:00Z", "--to", "2026-01-01T00:00:00Z")
		require.Equal(t, exitError, r.code, "the server refuses a window over 366 days")
		require.Contains(t, r.stderr, "from")
	})
}
