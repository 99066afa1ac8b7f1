package notify_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/notify"
)

func circuitOpened(endpoint string) notify.Notice {
	return notify.Notice{Kind: notify.CircuitOpened, Title: "Endpoint " + endpoint + ": circuit opened",
		Text: "5 consecutive failures", EndpointID: endpoint, Fields: map[string]string{"state": "open"}}
}

func TestWebhookNoticeArrivesSigned(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, testSecret)
	clk := newClock()
	n, obs := webhookNotifier(t, r, clk, notify.Options{})
	ctx := context.Background()

	n.Notify(ctx, circuitOpened("ep-1"))
	n.Notify(ctx, circuitOpened("ep-2"))
	n.RunOnce(ctx)

	got := r.received()
	require.Len(t, got, 2)
	require.NotEqual(t, got[0].ID, got[1].ID, "webhook-id is unique per notice")
	for _, g := range got {
		require.Equal(t, "circuit_opened", g.Payload.Type)
		require.Equal(t, t0, g.Payload.Timestamp)
		var data struct {
			Title      string            `json:"title"`
			EndpointID string            `json:"endpoint_id"`
			Fields     map[string]string `json:"fields"`
		}
		require.NoError(t, json.Unmarshal(g.Payload.Data, &data))
		require.Contains(t, data.Title, "circuit opened")
		require.Equal(t, "open", data.Fields["state"])
		require.NotEmpty(t, g.Header.Get("X-Qhronos-Signature"), "signed like deliveries")
	}
	require.Equal(t, 2, obs.get("webhook/circuit_opened/sent"))
}

func TestWebhookNoticeIsRetriedWithTheSameID(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, testSecret)
	r.fail = 2
	n, obs := webhookNotifier(t, r, newClock(), notify.Options{WebhookAttempts: 3, WebhookBackoff: time.Millisecond})
	n.Notify(context.Background(), circuitOpened("ep-1"))
	n.RunOnce(context.Background())

	got := r.received()
	require.Len(t, got, 3, "two 503s, then delivered")
	require.Equal(t, got[0].ID, got[2].ID, "a retry keeps the webhook-id")
	require.Equal(t, 1, obs.get("webhook/circuit_opened/sent"))
}

func TestSameNoticeAtMostOncePerMinInterval(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, testSecret)
	clk := newClock()
	n, obs := webhookNotifier(t, r, clk, notify.Options{MinInterval: time.Minute})
	ctx := context.Background()

	for range 5 { // a flapping circuit
		n.Notify(ctx, circuitOpened("ep-1"))
		n.RunOnce(ctx)
		clk.Advance(10 * time.Second)
	}
	n.Notify(ctx, circuitOpened("ep-2"))
	n.Notify(ctx, notify.Notice{Kind: notify.CircuitClosed, EndpointID: "ep-1", Title: "closed"})
	n.RunOnce(ctx)
	require.Len(t, r.received(), 3, "ep-1 opened once; ep-2 opened and ep-1 closed are other notices")
	require.Equal(t, 4, obs.get("/circuit_opened/suppressed"))

	clk.Advance(time.Minute)
	n.Notify(ctx, circuitOpened("ep-1"))
	n.RunOnce(ctx)
	require.Len(t, r.received(), 4, "after min_interval the notice goes out again")
}

func failed(i int) notify.Notice {
	return notify.Notice{Kind: notify.DeliveryFailed, EventID: "ev-" + string(rune('a'+i%26)),
		OccurrenceID: "occ-" + time.Duration(i).String(), Title: "failed",
		Fields: map[string]string{"event_name": "billing", "error": "HTTP 500"}}
}

func TestFailedDeliveriesAreDigested(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, testSecret)
	clk := newClock()
	n, _ := webhookNotifier(t, r, clk, notify.Options{DigestInterval: 5 * time.Minute})
	ctx := context.Background()

	for i := range 25 {
		n.Notify(ctx, failed(i))
	}
	n.RunOnce(ctx)
	clk.Advance(5*time.Minute - time.Second)
	n.RunOnce(ctx)
	require.Empty(t, r.received(), "nothing before digest_interval")

	clk.Advance(time.Second)
	n.RunOnce(ctx)
	got := r.received()
	require.Len(t, got, 1, "one digest")
	require.Equal(t, "delivery_failed", got[0].Payload.Type)
	var d struct {
		Count    int `json:"count"`
		More     int `json:"more"`
		Failures []struct {
			EventID, OccurrenceID, Error string
		} `json:"failures"`
		Text string `json:"text"`
	}
	require.NoError(t, json.Unmarshal(got[0].Payload.Data, &d))
	require.Equal(t, 25, d.Count)
	require.Len(t, d.Failures, 20)
	require.Equal(t, 5, d.More)
	require.Equal(t, "HTTP 500", d.Failures[0].Error)
	require.Contains(t, d.Text, "and 5 more")

	n.Notify(ctx, failed(99))
	n.RunOnce(ctx)
	clk.Advance(5 * time.Minute)
	n.RunOnce(ctx)
	require.Len(t, r.received(), 2, "the next failure starts the next digest")
}

func TestChannelKindsFilterNotices(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, testSecret)
	clk := newClock()
	n, _ := webhookNotifier(t, r, clk, notify.Options{}, notify.EndpointDisabled)
	ctx := context.Background()
	n.Notify(ctx, circuitOpened("ep-1"))
	n.Notify(ctx, failed(1))
	n.Notify(ctx, notify.Notice{Kind: notify.EndpointDisabled, EndpointID: "ep-1", Title: "disabled"})
	n.RunOnce(ctx)
	clk.Advance(time.Hour)
	n.RunOnce(ctx)
	got := r.received()
	require.Len(t, got, 1)
	require.Equal(t, "endpoint_disabled", got[0].Payload.Type)
}

func TestNotifyNeverBlocks(t *testing.T) {
	t.Parallel()
	obs := &counts{}
	n := notify.New(notify.Deps{Observer: obs}, notify.Options{QueueSize: 2})
	for range 5 {
		n.Notify(context.Background(), circuitOpened("ep-1"))
	}
	require.Equal(t, uint64(3), n.Dropped())
	require.Equal(t, 3, obs.get("/circuit_opened/dropped"))

	var none *notify.Notifier
	none.Notify(context.Background(), circuitOpened("ep-1")) // no-op, no panic
}

func TestStopSendsPendingDigests(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, testSecret)
	n, _ := webhookNotifier(t, r, newClock(), notify.Options{})
	require.NoError(t, n.Start(context.Background()))
	n.Notify(context.Background(), failed(1))
	n.Stop()
	require.Len(t, r.received(), 1, "a digest collected before shutdown is sent, not lost")
}

// A channel scoped by tags takes the notices about resources carrying one
// of them — digested failures included — and nothing installation-wide;
// an unscoped channel takes everything.
func TestChannelScopedByTagsTakesItsOwnNoticesOnly(t *testing.T) {
	t.Parallel()
	teamA, ops := newReceiver(t, testSecret), newReceiver(t, testSecret)
	clk := newClock()
	n := notify.New(notify.Deps{Channels: []notify.Channel{
		{ID: "config:a", Name: "team-a", Type: "webhook", URL: teamA.srv.URL, Secret: testSecret, Tags: []string{"team-a"}},
		{ID: "config:ops", Name: "ops", Type: "webhook", URL: ops.srv.URL, Secret: testSecret},
	}, HTTP: loopbackClient(), Now: clk.Now}, notify.Options{DigestInterval: time.Minute})
	ctx := context.Background()

	mine, theirs := circuitOpened("ep-a"), circuitOpened("ep-b")
	mine.Tags, theirs.Tags = []string{"billing", "team-a"}, []string{"team-b"}
	n.Notify(ctx, mine)
	n.Notify(ctx, theirs)
	n.Notify(ctx, notify.Notice{Kind: notify.DependencyUnreachable, Title: "Redis unreachable",
		Fields: map[string]string{"dependency": "redis"}})
	for i, tags := range [][]string{{"team-a"}, {"team-b"}, {"team-a"}} {
		n.Notify(ctx, notify.Notice{Kind: notify.DeliveryFailed, EventID: "ev", OccurrenceID: string(rune('1' + i)),
			Tags: tags, Fields: map[string]string{"event_name": "billing"}})
	}
	n.RunOnce(ctx)
	clk.Advance(time.Minute)
	n.RunOnce(ctx)

	types := func(r *receiver) map[string]int {
		out := map[string]int{}
		for _, x := range r.received() {
			out[x.Payload.Type]++
		}
		return out
	}
	require.Equal(t, map[string]int{"circuit_opened": 1, "delivery_failed": 1}, types(teamA))
	require.Equal(t, map[string]int{"circuit_opened": 2, "delivery_failed": 1, "dependency_unreachable": 1}, types(ops))
	digests := map[string]int{}
	for _, r := range []*receiver{teamA, ops} {
		for _, x := range r.received() {
			if x.Payload.Type == "delivery_failed" {
				var d struct {
					Count int `json:"count"`
				}
				require.NoError(t, json.Unmarshal(x.Payload.Data, &d))
				digests[r.srv.URL] = d.Count
			}
		}
	}
	require.Equal(t, 2, digests[teamA.srv.URL], "team-a's digest holds its two failures only")
	require.Equal(t, 3, digests[ops.srv.URL])
}
