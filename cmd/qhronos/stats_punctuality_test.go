package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// TestStatsPunctuality delivers two events' instants to a real receiver,
// one on time and one late (its event paused over the instant and resumed,
// firing what it held, after the tolerance), and reads them back from
// `qhronos stats punctuality`: the table a user sends on, the window in the
// local zone (or UTC), the JSON, the groupings and the flags it refuses.
func TestStatsPunctuality(t *testing.T) {
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		e["TZ"] = "Asia/Tokyo"
		onTimeRC, lateRC := qhronostest.NewReceiver(t), qhronostest.NewReceiver(t)
		tag := "punct-" + qhronostest.RandomHex(t, 4)
		instant := time.Now().Add(5 * time.Second).UTC().Truncate(time.Second)
		var onTime, late client.Event
		ok(t, e, &onTime, "events", "create", "--name", "nightly export", "--webhook", onTimeRC.URL, "--tag", tag,
			"--start", instant.Format(time.RFC3339))
		ok(t, e, &late, "events", "create", "--name", "catch-up digest", "--webhook", lateRC.URL, "--tag", tag,
			"--start", instant.Format(time.RFC3339))
		ok(t, e, nil, "events", "pause", late.ID, "--catch-up", "fire")

		// The tolerance is chosen above how late this machine delivered the
		// first instant (the receiver's clock bounds it), and the paused one
		// is resumed only once its instant is further past than that.
		qhronostest.Wait(t, time.Minute, "the on-time instant delivered", func() bool { return len(onTimeRC.Requests()) == 1 })
		seen := onTimeRC.Requests()[0].At.Sub(instant)
		tolerance := time.Minute
		for _, d := range []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second} {
			if seen+500*time.Millisecond < d {
				tolerance = d
				break
			}
		}
		resumeAt := instant.Add(tolerance + 500*time.Millisecond)
		qhronostest.Wait(t, tolerance+time.Minute, "the held instant further past than the tolerance",
			func() bool { return time.Now().After(resumeAt) })
		ok(t, e, nil, "events", "resume", late.ID)
		qhronostest.Wait(t, time.Minute, "the held instant delivered on resume", func() bool { return len(lateRC.Requests()) == 1 })

		// The outcome is recorded just after the receiver answers.
		var report client.PunctualityReport
		tol := tolerance.String()
		qhronostest.Wait(t, time.Minute, "both deliveries counted", func() bool {
			ok(t, e, &report, "stats", "punctuality", "--tag", tag, "--tolerance", tol)
			return report.Total.Completed == 2
		})
		require.Equal(t, 2, report.Total.Due)
		require.Equal(t, 1, report.Total.OnTime, "%+v", report.Total)
		require.Equal(t, 1, report.Total.Late, "%+v", report.Total)
		require.Equal(t, 0.5, *report.Total.OnTimeRatio)
		require.Equal(t, 1.0, *report.Total.SuccessRatio)
		require.GreaterOrEqual(t, report.Total.LatenessMs.P99, int(tolerance.Milliseconds()), "the held one was late")
		require.EqualValues(t, tolerance.Milliseconds(), report.ToleranceMs)
		require.Len(t, report.Groups, 2)
		require.Equal(t, "catch-up digest", report.Groups[0].Name, "groups sorted by name")
		require.Equal(t, late.ID, *report.Groups[0].Key)
		require.Equal(t, 1, report.Groups[0].Late)
		require.Equal(t, "nightly export", report.Groups[1].Name)
		require.Equal(t, onTime.ID, *report.Groups[1].Key)
		require.Equal(t, 1, report.Groups[1].OnTime)

		r := cli(t, e, "", "stats", "punctuality", "--tag", tag, "--tolerance", tol, "--group-by", "tag")
		require.Equal(t, 0, r.code, r.stderr)
		require.Regexp(t, `(?m)^TAG\s+DUE\s+ON TIME\s+LATE\s+MISSED\s+SKIPPED\s+FAILED\s+PENDING\s+LATE P50/P95/P99 MS\s+SUCCESS$`, r.stdout)
		require.Regexp(t, `(?m)^`+tag+`\s+2\s+1 \(50\.0%\)\s+1\s+0\s+0\s+0\s+0\s+\d+/\d+/\d+\s+100\.0%$`, r.stdout)
		require.Regexp(t, `(?m)^all\s+2\s+1 \(50\.0%\)\s+1\s`, r.stdout)
		require.Contains(t, r.stdout, fmt.Sprintf("on time: less than %d ms late", tolerance.Milliseconds()))
		// The window in the local zone, said once; --utc switches.
		tokyo, err := time.LoadLocation("Asia/Tokyo")
		require.NoError(t, err)
		require.Contains(t, r.stdout, "instants scheduled "+report.From.In(tokyo).Format(timeLayout))
		require.Contains(t, r.stdout, "(times in Asia/Tokyo, the local zone")
		delete(e, "TZ") // the system's zone, named once
		r = cli(t, e, "", "stats", "punctuality", "--tag", tag)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "the local zone, 24-hour")
		require.NotContains(t, r.stdout, "the local zone, the local zone")
		r = cli(t, e, "", "stats", "punctuality", "--tag", tag, "--utc")
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "instants scheduled "+report.From.UTC().Format(timeLayout))
		require.Contains(t, r.stdout, "(times in UTC)")

		r = cli(t, e, "", "stats", "punctuality", "--group-by", "owner")
		require.Equal(t, exitUsage, r.code)
		require.Contains(t, r.stderr, "--group-by")
		r = cli(t, e, "", "stats", "punctuality", "--tolerance", "soon")
		require.Equal(t, exitUsage, r.code)
		require.Contains(t, r.stderr, "--tolerance")
		r = cli(t, e, "", "stats", "punctuality", "--from", "2020-01-01T00:00:00Z", "--to", "2026-01-01T00:00:00Z")
		require.Equal(t, exitError, r.code, "the server refuses a window over 366 days")
		require.Contains(t, r.stderr, "from")
	})
}
