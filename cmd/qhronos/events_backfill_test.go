package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// events backfill fires a daily event's past instants that have none yet:
// they are delivered now with reason backfill, a calendar's day is recorded
// skipped unless --ignore-exceptions, a second run creates nothing, and the
// event's history says so. Refusals set the exit code and name the flag or
// field.
func TestEventsBackfill(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		rc := qhronostest.NewReceiver(t)
		tag := "backfill-" + qhronostest.RandomHex(t, 4)
		// Daily at a time an hour ahead: its three previous days' instants
		// are the range, the middle one on a calendar's day.
		start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		from, to := start.AddDate(0, 0, -3), start.AddDate(0, 0, -1)
		holiday := start.AddDate(0, 0, -2)
		var cal client.Calendar
		ok(t, e, &cal, "calendars", "create", "--name", "holiday", "--date", holiday.Format("2006-01-02"), "--tag", tag)
		daily := func(name string) client.Event {
			return postEvent(t, srv, map[string]any{"name": name, "start_time": start.Format(time.RFC3339),
				"rrule": "FREQ=DAILY", "webhook": rc.URL, "tags": []string{tag},
				"calendars": []map[string]string{{"id": cal.ID, "policy": "skip"}}})
		}
		ev := daily("nightly report")
		rangeArgs := []string{"--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339)}

		var res client.BackfillResult
		ok(t, e, &res, append([]string{"events", "backfill", ev.ID}, rangeArgs...)...)
		require.Equal(t, client.BackfillResult{EventID: ev.ID, From: from, To: to, Instants: 3, Created: 2, Skipped: 1},
			normalized(res), "both ends of the range are included; the calendar's day is skipped")

		var occs []client.Occurrence
		ok(t, e, &occs, "occurrences", "list", "--event", ev.ID, "--order", "scheduled_at", "--to", start.Format(time.RFC3339))
		got := map[time.Time]string{}
		for _, o := range occs {
			got[o.ScheduledAt.UTC()] = string(o.Status) + " " + reasonText(o.Reason)
		}
		require.Equal(t, "skipped calendar", got[holiday], "%v", got)
		require.Len(t, got, 3, "%v", got)
		qhronostest.Wait(t, 60*time.Second, "the two backfilled instants are delivered", func() bool {
			return len(rc.Requests()) >= 2
		})
		qhronostest.Wait(t, 60*time.Second, "their outcomes are recorded", func() bool {
			ok(t, e, &occs, "occurrences", "list", "--event", ev.ID, "--status", "completed")
			return len(occs) == 2
		})
		for _, o := range occs {
			require.Equal(t, client.OccurrenceReasonBackfill, *o.Reason)
			require.Contains(t, []time.Time{from, to}, o.ScheduledAt.UTC(), "each keeps its instant")
		}

		// Again, as a table: everything exists already.
		r := cli(t, e, "", append([]string{"events", "backfill", ev.ID}, rangeArgs...)...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "0", field(t, r.stdout, "CREATED"))
		require.Equal(t, "3", field(t, r.stdout, "EXISTING"))
		require.Equal(t, from.Format(timeLayout), field(t, r.stdout, "FROM"), "in the event's zone, UTC")
		require.Contains(t, r.stdout, "(times in UTC, the event's zone")

		var entries []client.HistoryEntry
		ok(t, e, &entries, "events", "history", ev.ID)
		require.Equal(t, "backfill", entries[len(entries)-1].Action)
		require.Equal(t, "cli", entries[len(entries)-1].Channel)

		other := daily("ignores the calendar")
		ok(t, e, &res, append([]string{"events", "backfill", other.ID, "--ignore-exceptions"}, rangeArgs...)...)
		require.Equal(t, 3, res.Created, "--ignore-exceptions fires the calendar's day too: %+v", res)
		require.Zero(t, res.Skipped)

		var once client.Event
		ok(t, e, &once, "events", "create", "--name", "once", "--start", "in 1 hour", "--webhook", rc.URL, "--tag", tag)
		ok(t, e, nil, "events", "pause", other.ID)
		for _, tc := range []errCase{
			{"no --from", e, []string{"events", "backfill", ev.ID, "--to", "now"}, exitUsage, "--from"},
			{"bad --from", e, []string{"events", "backfill", ev.ID, "--from", "whenever", "--to", "now"}, exitUsage, "--from"},
			{"to in the future", e, []string{"events", "backfill", ev.ID, "--from", "7 days ago", "--to", "in 1 hour"}, exitError, "to: "},
			{"from after to", e, []string{"events", "backfill", ev.ID, "--from", "1 day ago", "--to", "7 days ago"}, exitError, "from: "},
			{"one-time", e, []string{"events", "backfill", once.ID, "--from", "7 days ago", "--to", "now"}, exitError, "HTTP 409"},
			{"paused", e, []string{"events", "backfill", other.ID, "--from", "7 days ago", "--to", "now"}, exitError, "HTTP 409"},
		} {
			r := cli(t, tc.env, "", tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("%s: qhronos %v: exit %d, stderr %q; want exit %d naming %q", tc.name, tc.args, r.code,
					r.stderr, tc.code, tc.stderr)
			}
		}
	})
}

// normalized is res with its instants in UTC, for comparison.
func normalized(res client.BackfillResult) client.BackfillResult {
	res.From, res.To = res.From.UTC(), res.To.UTC()
	return res
}
