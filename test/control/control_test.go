// Package control tests calendar-grade control of a schedule through the
// public API of the real server: skip, unskip and move one occurrence,
// exceptions on instants not yet materialized, pause until, and the ledger
// of reasons — on both stores, across a restart and across three
// instances.
package control

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }

// client calls one server's API with the master token.
type client struct {
	t   testing.TB
	srv *qhronostest.Server
}

// call is the server's Call on behalf of the test.
func (c client) call(method, path string, body, out any) int {
	c.t.Helper()
	return c.srv.Call(c.t, method, path, body, out)
}

// occurrence is the part of the occurrence resource these tests read.
type occurrence struct {
	ID                  string     `json:"id"`
	ScheduledAt         time.Time  `json:"scheduled_at"`
	Status              string     `json:"status"`
	AttemptCount        int        `json:"attempt_count"`
	Reason              *string    `json:"reason"`
	OriginalScheduledAt *time.Time `json:"original_scheduled_at"`
}

func (c client) occurrences(eventID, query string) []occurrence {
	c.t.Helper()
	var page []occurrence
	require.Equal(c.t, 200, c.call("GET", "/events/"+eventID+"/occurrences?order=scheduled_at&limit=100"+query, nil, &page))
	return page
}

func (c client) byID(eventID string) map[string]occurrence {
	out := map[string]occurrence{}
	for _, o := range c.occurrences(eventID, "") {
		out[o.ID] = o
	}
	return out
}

func reasonOf(o occurrence) string {
	if o.Reason == nil {
		return ""
	}
	return *o.Reason
}

// delivered returns the occurrence ids the receiver got, once each.
func delivered(t testing.TB, rc *qhronostest.Receiver) map[string]int {
	out := map[string]int{}
	for _, r := range rc.Requests() {
		var p struct {
			OccurrenceID string `json:"occurrence_id"`
		}
		require.NoError(t, json.Unmarshal(r.Body, &p))
		out[p.OccurrenceID]++
	}
	return out
}

// createSeries creates an event firing every two seconds, five times, from
// a whole second a few seconds ahead; it returns its id and first instant.
func createSeries(t testing.TB, c client, url string, lead time.Duration) (string, time.Time) {
	start := time.Now().Add(lead).Truncate(time.Second).UTC()
	var ev struct {
		ID string `json:"id"`
	}
	require.Equal(t, 201, c.call("POST", "/events", map[string]any{
		"name": "control", "start_time": start.Format(time.RFC3339), "rrule": "FREQ=SECONDLY;INTERVAL=2;COUNT=5",
		"webhook": url, "tags": []string{"control"},
	}, &ev))
	return ev.ID, start
}

// controlScenario skips the second instant, moves the third after the
// last, and on an instant not yet addressed by id adds and removes an
// exception — each change through one of the given servers in turn — then
// checks what fired once `fire` ran (a restart, more instances, or
// nothing): the first, fourth and fifth instants and the moved one, each
// once; never the skipped one nor the moved one at its old time.
func controlScenario(t *testing.T, via []client, rc *qhronostest.Receiver, fire func()) {
	c := via[0]
	next := func() client { via = append(via[1:], via[0]); return via[0] }
	id, s := createSeries(t, c, rc.URL, 8*time.Second)
	rows := c.occurrences(id, "")
	require.Len(t, rows, 5)
	at := func(k int) time.Time { return s.Add(time.Duration(2*k) * time.Second) }

	// Skip the second instant, with a reason.
	var got occurrence
	require.Equal(t, 200, next().call("POST", "/occurrences/"+rows[1].ID+"/skip", map[string]any{"reason": "holiday"}, &got))
	require.Equal(t, "skipped", got.Status)
	require.Equal(t, "manual", reasonOf(got))

	// Move the third after the last: same id, original instant recorded.
	to := at(4).Add(time.Second)
	require.Equal(t, 200, next().call("POST", "/occurrences/"+rows[2].ID+"/move", map[string]any{"to": to}, &got))
	require.Equal(t, rows[2].ID, got.ID, "a moved occurrence keeps its id")
	require.True(t, got.ScheduledAt.Equal(to), "moved to %s, got %s", to, got.ScheduledAt)
	require.NotNil(t, got.OriginalScheduledAt)
	require.True(t, got.OriginalScheduledAt.Equal(at(2)))

	// Never onto an instant the series has, never into the past, never
	// an instant the series does not plan.
	require.Equal(t, 400, next().call("POST", "/occurrences/"+rows[3].ID+"/move", map[string]any{"to": at(4)}, nil))
	require.Equal(t, 400, next().call("POST", "/occurrences/"+rows[3].ID+"/move",
		map[string]any{"to": time.Now().Add(-time.Minute)}, nil))
	require.Equal(t, 400, next().call("POST", "/events/"+id+"/exceptions",
		map[string]any{"at": at(3).Add(time.Second), "action": "skip"}, nil))
	require.Equal(t, 400, next().call("POST", "/events/"+id+"/exceptions",
		map[string]any{"at": at(3), "action": "pause"}, nil))

	// An exception on the fourth instant, then removed: it fires as planned.
	require.Equal(t, 201, next().call("POST", "/events/"+id+"/exceptions",
		map[string]any{"at": at(3), "action": "skip", "reason": "maybe"}, nil))
	require.Equal(t, "skipped", c.byID(id)[rows[3].ID].Status)
	require.Equal(t, 204, next().call("DELETE", "/events/"+id+"/exceptions/"+at(3).Format(time.RFC3339), nil, nil))
	require.Equal(t, "pending", c.byID(id)[rows[3].ID].Status)

	// Skip the fifth by hand and undo it.
	require.Equal(t, 200, next().call("POST", "/occurrences/"+rows[4].ID+"/skip", nil, &got))
	require.Equal(t, 200, next().call("POST", "/occurrences/"+rows[4].ID+"/unskip", nil, &got))
	require.Equal(t, "pending", got.Status)
	require.Equal(t, rows[4].ID, got.ID)

	var exs struct {
		Data []struct {
			At     time.Time `json:"at"`
			Action string    `json:"action"`
		} `json:"data"`
	}
	require.Equal(t, 200, c.call("GET", "/events/"+id+"/exceptions", nil, &exs))
	require.Len(t, exs.Data, 2, "the skip and the move are kept with the event")

	// The preview shows the plan as it will fire.
	var preview struct {
		Instants []struct {
			UTC     time.Time `json:"utc"`
			Skipped bool      `json:"skipped"`
			Reason  string    `json:"reason"`
		} `json:"instants"`
	}
	require.Equal(t, 200, c.call("GET", "/events/"+id+"/preview?count=10&after="+s.Add(-time.Second).Format(time.RFC3339), nil, &preview))
	var planned []string
	for _, in := range preview.Instants {
		state := "fires"
		if in.Skipped {
			state = "skipped/" + in.Reason
		}
		planned = append(planned, in.UTC.Sub(s).String()+" "+state)
	}
	require.Equal(t, []string{"0s fires", "2s skipped/manual", "6s fires", "8s fires", "9s fires"}, planned)

	fire()
	want := map[string]int{rows[0].ID: 1, rows[2].ID: 1, rows[3].ID: 1, rows[4].ID: 1}
	// Once every row is terminal the server has made its last attempt: each
	// completed row was attempted once, so nothing else can arrive.
	qhronostest.Wait(t, 60*time.Second, "every occurrence settled", func() bool {
		for _, o := range c.occurrences(id, "") {
			if o.Status != "completed" && o.Status != "skipped" {
				return false
			}
		}
		return len(delivered(t, rc)) >= 4
	})
	for _, o := range c.occurrences(id, "") {
		if o.Status == "completed" {
			require.Equal(t, 1, o.AttemptCount, "occurrence %s", o.ID)
		}
	}
	require.Equal(t, want, delivered(t, rc))

	// The ledger agrees with what fired.
	final := c.occurrences(id, "")
	statuses := map[string]string{}
	var firedAt []string
	for _, o := range final {
		statuses[o.ID] = o.Status + "/" + reasonOf(o)
		if o.Status == "completed" {
			firedAt = append(firedAt, o.ScheduledAt.Sub(s).String())
		}
	}
	require.Equal(t, []string{"0s", "6s", "8s", "9s"}, firedAt, "what fired is what the preview showed")
	require.Equal(t, map[string]string{rows[0].ID: "completed/", rows[1].ID: "skipped/manual",
		rows[2].ID: "completed/", rows[3].ID: "completed/", rows[4].ID: "completed/"}, statuses)
	var skipped []occurrence
	require.Equal(t, 200, c.call("GET", "/occurrences?event_id="+id+"&reason=manual", nil, &struct {
		Data *[]occurrence `json:"data"`
	}{&skipped}))
	require.Len(t, skipped, 1)
	require.Equal(t, rows[1].ID, skipped[0].ID)

	// /stats counts by reason; the Prometheus counter too, once the instant
	// passed (the leader tallies rows decided ahead of their time).
	var stats struct {
		Total struct {
			ByReason map[string]map[string]int `json:"by_reason"`
		} `json:"total"`
	}
	require.Equal(t, 200, c.call("GET", "/stats", nil, &stats))
	require.Equal(t, 1, stats.Total.ByReason["skipped"]["manual"])
	qhronostest.Wait(t, 60*time.Second, "the ledger counter", func() bool {
		total := 0
		for _, cl := range via {
			total += cl.metric(`qhronos_occurrences_ended_total{reason="manual",status="skipped"}`)
		}
		return total == 1
	})
}

// metric reads one sample of the server's /metrics (0 when absent).
func (c client) metric(sample string) int {
	c.t.Helper()
	res, err := http.Get(c.srv.URL + "/metrics")
	require.NoError(c.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			require.NoError(c.t, err)
			return n
		}
	}
	return 0
}

func TestSkipAndMoveHoldAcrossARestart(t *testing.T) {
	for _, b := range qhronostest.Backends() {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			rc := qhronostest.NewReceiver(t)
			srv := qhronostest.Start(t, b)
			controlScenario(t, []client{{t, srv}}, rc, srv.Restart)
		})
	}
}

func TestSkipAndMoveHoldAcrossThreeInstances(t *testing.T) {
	rc := qhronostest.NewReceiver(t)
	a := qhronostest.Start(t, qhronostest.Postgres, qhronostest.WithRedis(t)...)
	b, c := a.Peer(t), a.Peer(t)
	controlScenario(t, []client{{t, a}, {t, b}, {t, c}}, rc, func() {})
}

func TestPauseUntilResumesByItselfAndSkipsTheInstantsInside(t *testing.T) {
	for _, b := range qhronostest.Backends() {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			rc := qhronostest.NewReceiver(t)
			srv := qhronostest.Start(t, b)
			c := client{t, srv}
			// The pause must land before the first instant: a lead that a
			// loaded machine cannot eat up.
			id, s := createSeries(t, c, rc.URL, 10*time.Second)
			until := s.Add(3 * time.Second) // the first two instants fall inside the pause
			var ev struct {
				Status      string     `json:"status"`
				PausedUntil *time.Time `json:"paused_until"`
				PauseReason string     `json:"pause_reason"`
				PausedBy    string     `json:"paused_by"`
			}
			require.Equal(t, 400, c.call("POST", "/events/"+id+"/pause", map[string]any{"until": time.Now().Add(-time.Second)}, nil))
			require.Equal(t, 400, c.call("POST", "/events/"+id+"/pause", map[string]any{"catch_up": "sometimes"}, nil))
			require.Equal(t, 200, c.call("POST", "/events/"+id+"/pause", map[string]any{"until": until, "reason": "maintenance"}, &ev))
			require.Equal(t, "paused", ev.Status)
			require.True(t, ev.PausedUntil.Equal(until))
			require.Equal(t, "maintenance", ev.PauseReason)
			require.NotEmpty(t, ev.PausedBy)

			qhronostest.Wait(t, 60*time.Second, "the event resumed by itself", func() bool {
				return c.call("GET", "/events/"+id, nil, &ev) == 200 && ev.Status == "active"
			})
			require.Nil(t, ev.PausedUntil)
			qhronostest.Wait(t, 60*time.Second, "the instants after the pause fired", func() bool {
				return len(delivered(t, rc)) >= 3
			})
			rows := c.occurrences(id, "")
			require.Len(t, rows, 5)
			fired := delivered(t, rc)
			for i, o := range rows {
				switch {
				case i < 2:
					require.Equal(t, "skipped/paused", o.Status+"/"+reasonOf(o), "instant %d is inside the pause", i)
					require.Zero(t, fired[o.ID])
				case i > 2:
					require.Equal(t, 1, fired[o.ID], "instant %d is after the pause", i)
				}
			}
		})
	}
}
