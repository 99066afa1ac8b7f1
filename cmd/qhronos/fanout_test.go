package main

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// writeFile writes content to a new file in a test directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// dataRows are the cells of a table's rows below its header, zone note left out.
func dataRows(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n")[1:] {
		if line != "" && !strings.HasPrefix(line, "(times in") {
			rows = append(rows, strings.Fields(line))
		}
	}
	return rows
}

// An event created with --topic fans out to the topic's subscribers: its
// table shows the topic where others show their action; the occurrence
// shows its fan-out counts; `occurrences deliveries` lists one row per
// subscription (delivered, filtered, failed with the code it got);
// `occurrences replay --subscription` (or its alias retry) re-sends one
// subscription's delivery and no other; `subscriptions deliveries` lists a
// subscription's attempts newest first, a page or --all. update and upsert
// take --topic too, and what `events get -o json` prints goes back in with
// its topic, or with another destination given as a flag. Refusals name
// the field or the flag.
func TestFanoutCommands(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		schema := writeFile(t, "digest.schema.json",
			`{"type": "object", "required": ["region"], "properties": {"region": {"type": "string"}}}`)
		ok(t, e, nil, "topics", "create", "digest.daily", "--schema", schema)

		rcA, rcC := qhronostest.NewReceiver(t), qhronostest.NewReceiver(t)
		var cFails atomic.Bool
		cFails.Store(true)
		rcC.Answer(func(qhronostest.Request) int {
			if cFails.Load() {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		})
		var epA, epC client.Endpoint
		ok(t, e, &epA, "endpoints", "create", "--name", "a", "--url", rcA.URL)
		ok(t, e, &epC, "endpoints", "create", "--name", "c", "--url", rcC.URL)
		var subA, subB, subC client.TopicSubscription
		ok(t, e, &subA, "subscriptions", "create", "--topic", "digest.daily", "--endpoint", epA.ID)
		ok(t, e, &subB, "subscriptions", "create", "--topic", "digest.*", "--endpoint", epA.ID,
			"--filter", `metadata.region == "us"`)
		ok(t, e, &subC, "subscriptions", "create", "--topic", "digest.daily", "--endpoint", epC.ID)

		// One attempt per delivery: C's fails at once.
		once := writeFile(t, "retry.json", `{"retry": {"max_attempts": 1}}`)
		r := cli(t, e, "", "events", "create", "-f", once, "--name", "digest", "--start", "in 1 hour",
			"--topic", "digest.daily", "--metadata", `{"region": "eu"}`)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "digest.daily", field(t, r.stdout, "TOPIC"))
		require.NotContains(t, r.stdout, "ACTION:")
		evID := field(t, r.stdout, "ID")
		var ev client.Event
		ok(t, e, &ev, "events", "get", evID)
		require.NotNil(t, ev.Topic)
		require.Equal(t, "digest.daily", *ev.Topic)
		require.Equal(t, client.ActionType("topic"), ev.Action.Type)
		r = cli(t, e, "", "events", "list")
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, strings.Join(row(t, r.stdout, evID), " "), " once topic digest.daily -",
			"the ACTION column names the topic")

		var occ client.Occurrence
		ok(t, e, &occ, "events", "trigger", evID)
		qhronostest.Wait(t, 60*time.Second, "the fan-out ends", func() bool {
			ok(t, e, &occ, "occurrences", "get", occ.ID)
			return occ.Status == client.OccurrenceStatusFailed
		})
		require.NotNil(t, occ.Fanout)
		require.Equal(t, client.FanoutSummary{Subscriptions: 3, Delivered: 1, Failed: 1, Filtered: 1}, *occ.Fanout)
		r = cli(t, e, "", "occurrences", "get", occ.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "3 subscriptions: 1 delivered, 1 failed, 1 filtered, 0 pending (qhronos occurrences deliveries)",
			field(t, r.stdout, "FAN-OUT"))
		require.Len(t, rcA.Requests(), 1)
		require.Len(t, rcC.Requests(), 1)

		r = cli(t, e, "", "occurrences", "deliveries", occ.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, []string{"SUBSCRIPTION", "ENDPOINT", "STATUS", "ATTEMPTS", "LAST", "CODE/ERROR", "NEXT"},
			strings.Fields(strings.Split(r.stdout, "\n")[0]))
		require.Len(t, dataRows(r.stdout), 3)
		require.Equal(t, []string{subA.ID, epA.ID, "delivered", "1", "200", "-"}, row(t, r.stdout, subA.ID))
		require.Equal(t, []string{subB.ID, epA.ID, "filtered", "0", "-", "-"}, row(t, r.stdout, subB.ID))
		require.Equal(t, []string{subC.ID, epC.ID, "failed", "1", "503", "-"}, row(t, r.stdout, subC.ID))
		var ds []client.Delivery
		ok(t, e, &ds, "occurrences", "deliveries", occ.ID)
		require.Len(t, ds, 3)
		require.True(t, slices.IsSortedFunc(ds, func(a, b client.Delivery) int { return strings.Compare(a.SubscriptionID, b.SubscriptionID) }),
			"in subscription id order")
		failed := ds[slices.IndexFunc(ds, func(d client.Delivery) bool { return d.SubscriptionID == subC.ID })]
		require.Equal(t, client.DeliveryStatus("failed"), failed.Status)
		require.NotNil(t, failed.Error)
		require.Contains(t, *failed.Error, "503")
		require.Len(t, failed.Attempts, 1)
		require.Equal(t, "failed", failed.Attempts[0].Outcome)
		require.Equal(t, subC.ID, *failed.Attempts[0].SubscriptionID)

		// C is back: its delivery alone goes again.
		cFails.Store(false)
		r = cli(t, e, "", "occurrences", "replay", occ.ID, "--subscription", subC.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, occ.ID, field(t, r.stdout, "ID"))
		qhronostest.Wait(t, 60*time.Second, "C's replay is delivered", func() bool {
			ok(t, e, &occ, "occurrences", "get", occ.ID)
			return occ.Status == client.OccurrenceStatusCompleted && len(rcC.Requests()) == 2
		})
		require.Len(t, rcA.Requests(), 1, "A's delivery is not sent again")
		r = cli(t, e, "", "occurrences", "deliveries", occ.ID)
		require.Equal(t, []string{subC.ID, epC.ID, "delivered", "2", "200", "-"}, row(t, r.stdout, subC.ID))
		require.Equal(t, []string{subA.ID, epA.ID, "delivered", "1", "200", "-"}, row(t, r.stdout, subA.ID))

		// retry is replay's other name; a delivered delivery goes again too.
		r = cli(t, e, "", "occurrences", "retry", occ.ID, "--subscription", subA.ID)
		require.Equal(t, 0, r.code, r.stderr)
		qhronostest.Wait(t, 60*time.Second, "A's replay is delivered", func() bool {
			ok(t, e, &occ, "occurrences", "get", occ.ID)
			return occ.Status == client.OccurrenceStatusCompleted && len(rcA.Requests()) == 2
		})
		require.Len(t, rcC.Requests(), 2, "C's delivery is not sent again")

		// A subscription's attempts, newest first.
		r = cli(t, e, "", "subscriptions", "deliveries", subC.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, []string{"OCCURRENCE", "ATTEMPT", "STARTED", "OUTCOME", "CODE"},
			strings.Fields(strings.Split(r.stdout, "\n")[0]))
		rows := dataRows(r.stdout)
		require.Len(t, rows, 2)
		require.Len(t, rows[0], 7, "the start is a date, a time and an offset: %q", rows[0])
		// A replay starts the delivery's attempts afresh: both are attempt 1.
		require.Equal(t, []string{occ.ID, "1", "completed", "200"}, append(rows[0][:2:2], rows[0][5:]...))
		require.Equal(t, []string{occ.ID, "1", "failed", "503"}, append(rows[1][:2:2], rows[1][5:]...))
		var atts []client.Attempt
		ok(t, e, &atts, "subscriptions", "deliveries", subC.ID, "--limit", "1")
		require.Len(t, atts, 1, "one page")
		require.Equal(t, "completed", atts[0].Outcome, "the newest")
		ok(t, e, &atts, "subscriptions", "deliveries", subC.ID, "--limit", "1", "--all")
		require.Len(t, atts, 2, "every page")
		require.Equal(t, []string{"completed", "failed"}, []string{atts[0].Outcome, atts[1].Outcome})
		require.True(t, *atts[0].Manual, "the replay")
		require.False(t, atts[0].StartedAt.Before(atts[1].StartedAt), "newest first")
		for _, at := range atts {
			require.Equal(t, occ.ID, at.OccurrenceID)
			require.Equal(t, subC.ID, *at.SubscriptionID)
		}
		ok(t, e, &atts, "subscriptions", "deliveries", subB.ID)
		require.Empty(t, atts, "a filtered subscription was never sent anything")

		// update and upsert take --topic; another destination flag takes the event back.
		hook := qhronostest.NewReceiver(t)
		var plain client.Event
		ok(t, e, &plain, "events", "create", "--name", "hook", "--start", "in 1 hour", "--webhook", hook.URL)
		var moved client.Event
		ok(t, e, &moved, "events", "update", plain.ID, "--topic", "digest.daily", "--metadata", `{"region": "us"}`)
		require.NotNil(t, moved.Topic)
		require.Equal(t, "digest.daily", *moved.Topic)
		var back client.Event
		ok(t, e, &back, "events", "update", plain.ID, "--webhook", hook.URL)
		require.Nil(t, back.Topic)
		require.Equal(t, hook.URL, back.Webhook)
		r = cli(t, e, "", "events", "upsert", "digest:eu", "--name", "keyed digest", "--start", "in 1 hour",
			"--topic", "digest.daily", "--metadata", `{"region": "eu"}`)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "digest.daily", field(t, r.stdout, "TOPIC"))

		// What events get -o json prints goes back in as it is, or with another destination.
		r = cli(t, e, "", "events", "get", evID, "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		saved := writeFile(t, "event.json", r.stdout)
		var copied client.Event
		ok(t, e, &copied, "events", "create", "-f", saved, "--name", "copy")
		require.NotNil(t, copied.Topic)
		require.Equal(t, "digest.daily", *copied.Topic)
		var hooked client.Event
		ok(t, e, &hooked, "events", "create", "-f", saved, "--name", "copy", "--webhook", hook.URL)
		require.Nil(t, hooked.Topic)
		require.Equal(t, client.ActionTypeWebhook, hooked.Action.Type)
		var hookOcc client.Occurrence
		ok(t, e, &hookOcc, "events", "trigger", plain.ID)

		jwk := writeFile(t, "key.jwk", `{"kty": "OKP", "crv": "X25519", "x": "x"}`)
		create := []string{"events", "create", "--name", "x", "--start", "in 1 hour"}
		unknown := "00000000-0000-4000-8000-000000000000"
		for _, tc := range []errCase{
			{"unknown topic", e, append(create, "--topic", "digest.weekly"), exitError, "topic: "},
			{"metadata off the schema", e, append(create, "--topic", "digest.daily", "--metadata", `{"region": 7}`),
				exitError, "metadata: "},
			{"topic and webhook", e, append(create, "--topic", "digest.daily", "--webhook", hook.URL), exitUsage,
				"--webhook, --client, --action, --publish and --topic: give one"},
			{"topic and action", e, append(create, "--topic", "digest.daily", "--action", `{"type": "webhook"}`),
				exitUsage, "give one"},
			{"topic encrypted", e, append(create, "--topic", "digest.daily", "--encrypt-to", jwk), exitUsage,
				"--encrypt-to: only with"},
			{"filtered out", e, []string{"occurrences", "replay", occ.ID, "--subscription", subB.ID}, exitError,
				"subscription_id: the subscription has no delivery"},
			{"not a fan-out", e, []string{"occurrences", "replay", hookOcc.ID, "--subscription", subA.ID}, exitError,
				"subscription_id: "},
			{"subscription without an id", e, []string{"occurrences", "replay", "--status", "failed", "--subscription", subA.ID},
				exitUsage, "--subscription: only with an OCCURRENCE_ID"},
			{"subscription alone", e, []string{"occurrences", "replay", "--subscription", subA.ID}, exitUsage,
				"--subscription: only with an OCCURRENCE_ID"},
			{"empty subscription", e, []string{"occurrences", "replay", occ.ID, "--subscription", ""}, exitUsage,
				"--subscription: give a subscription id"},
			{"unknown occurrence", e, []string{"occurrences", "deliveries", unknown}, exitNotFound, "not found"},
			{"unknown subscription", e, []string{"subscriptions", "deliveries", unknown}, exitNotFound, "not found"},
			{"no occurrence id", e, []string{"occurrences", "deliveries"}, exitUsage, "OCCURRENCE_ID"},
			{"no subscription id", e, []string{"subscriptions", "deliveries"}, exitUsage, "SUBSCRIPTION_ID"},
			{"bad limit", e, []string{"subscriptions", "deliveries", subA.ID, "--limit", "0"}, exitUsage, "--limit"},
		} {
			r := cli(t, tc.env, "", tc.args...)
			require.Equal(t, tc.code, r.code, "%s: %s", tc.name, r.stderr)
			require.Contains(t, r.stderr, tc.stderr, tc.name)
		}
		ok(t, e, &ds, "occurrences", "deliveries", hookOcc.ID)
		require.Empty(t, ds, "an event that runs an action has no fan-out deliveries")
	})
}

// `occurrences deliveries` reads every page: a topic with more subscribers
// than a page holds lists each of them once.
func TestOccurrenceDeliveriesFollowPages(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		rc := qhronostest.NewReceiver(t)
		ok(t, e, nil, "topics", "create", "billing.invoice-paid")
		var ep client.Endpoint
		ok(t, e, &ep, "endpoints", "create", "--name", "billing", "--url", rc.URL)
		const n = 53 // a page is 50
		want := make([]string, 0, n)
		for range n {
			var sub client.TopicSubscription
			ok(t, e, &sub, "subscriptions", "create", "--topic", "billing.invoice-paid", "--endpoint", ep.ID)
			want = append(want, sub.ID)
		}
		var ev client.Event
		ok(t, e, &ev, "events", "create", "--name", "paid", "--start", "in 1 hour", "--topic", "billing.invoice-paid")
		var occ client.Occurrence
		ok(t, e, &occ, "events", "trigger", ev.ID)
		qhronostest.Wait(t, 60*time.Second, "every subscriber is sent the firing", func() bool {
			ok(t, e, &occ, "occurrences", "get", occ.ID)
			return occ.Status == client.OccurrenceStatusCompleted
		})
		require.Equal(t, n, occ.Fanout.Delivered)

		var ds []client.Delivery
		ok(t, e, &ds, "occurrences", "deliveries", occ.ID)
		got := make([]string, 0, len(ds))
		for _, d := range ds {
			got = append(got, d.SubscriptionID)
			require.Equal(t, client.DeliveryStatus("delivered"), d.Status)
		}
		slices.Sort(want)
		require.Equal(t, want, got, "each subscription once, in id order")
		r := cli(t, e, "", "occurrences", "deliveries", occ.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Len(t, dataRows(r.stdout), n)
	})
}
