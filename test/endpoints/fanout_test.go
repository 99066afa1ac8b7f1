package endpoints

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// fanoutOccurrence is the part of a fan-out occurrence these tests read.
type fanoutOccurrence struct {
	occurrence
	Fanout *struct {
		Subscriptions int `json:"subscriptions"`
		Delivered     int `json:"delivered"`
		Failed        int `json:"failed"`
		Filtered      int `json:"filtered"`
		Pending       int `json:"pending"`
	} `json:"fanout"`
}

// delivery is a row of GET /occurrences/{id}/deliveries.
type delivery struct {
	SubscriptionID string  `json:"subscription_id"`
	EndpointID     string  `json:"endpoint_id"`
	Status         string  `json:"status"`
	Error          *string `json:"error"`
	Attempts       []struct {
		Attempt        int    `json:"attempt"`
		Outcome        string `json:"outcome"`
		Manual         bool   `json:"manual"`
		SubscriptionID string `json:"subscription_id"`
	} `json:"attempts"`
}

// TestTopicFansOutToItsSubscribers: a topic with three subscriptions — one
// filtered out by its CEL filter, one whose endpoint fails — fires once;
// each receiver gets what it should, signed with its own endpoint's secret;
// the failing delivery retries alone, then a replay re-sends it alone, and
// one subscription's delivery can be replayed by itself. On both stores.
func TestTopicFansOutToItsSubscribers(t *testing.T) {
	t.Parallel()
	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			srv := qhronostest.Start(t, backend)
			c := client{t: t, srv: srv}
			require.Equal(t, http.StatusCreated, c.call("POST", "/topics", map[string]any{"name": "digest.daily",
				"schema": map[string]any{"type": "object", "required": []string{"region"},
					"properties": map[string]any{"region": map[string]any{"type": "string"}}}}, nil))

			rcA, rcB, rcC := qhronostest.NewReceiver(t), qhronostest.NewReceiver(t), qhronostest.NewReceiver(t)
			var cFails atomic.Bool
			cFails.Store(true)
			rcC.Answer(func(qhronostest.Request) int {
				if cFails.Load() {
					return http.StatusServiceUnavailable
				}
				return http.StatusOK
			})
			epA := c.createEndpoint(map[string]any{"name": "a", "url": rcA.URL})
			epB := c.createEndpoint(map[string]any{"name": "b", "url": rcB.URL})
			epC := c.createEndpoint(map[string]any{"name": "c", "url": rcC.URL})
			subscribe := func(topic, endpoint, filter string) string {
				var sub struct {
					ID string `json:"id"`
				}
				body := map[string]any{"topic": topic, "endpoint_id": endpoint}
				if filter != "" {
					body["filter"] = filter
				}
				require.Equal(t, http.StatusCreated, c.call("POST", "/subscriptions", body, &sub))
				return sub.ID
			}
			subA := subscribe("digest.daily", epA.ID, "")
			subB := subscribe("digest.*", epB.ID, `metadata.region == "us"`)
			subC := subscribe("digest.daily", epC.ID, `payload.topic == "digest.daily"`)

			at := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
			c.refused("POST", "/events", map[string]any{"name": "digest",
				"start_time": at, "topic": "digest.weekly"}, "topic")
			c.refused("POST", "/events", map[string]any{"name": "digest",
				"start_time": at, "topic": "digest.daily", "metadata": map[string]any{"region": 7}}, "metadata")
			c.refused("POST", "/events", map[string]any{"name": "digest",
				"start_time": at, "topic": "digest.daily", "webhook": rcA.URL}, "topic")

			var ev struct {
				ID     string          `json:"id"`
				Topic  string          `json:"topic"`
				Action json.RawMessage `json:"action"`
			}
			require.Equal(t, http.StatusCreated, c.call("POST", "/events", map[string]any{"name": "digest",
				"start_time": at, "topic": "digest.daily", "metadata": map[string]any{"region": "eu"},
				"retry": map[string]any{"max_attempts": 2, "initial_backoff": "1s", "max_backoff": "1s"}}, &ev))
			require.Equal(t, "digest.daily", ev.Topic)
			require.JSONEq(t, `{"type": "topic", "params": {"topic": "digest.daily"}}`, string(ev.Action),
				"clients that read action see the topic there too")
			require.Equal(t, http.StatusConflict, c.call("DELETE", "/topics/digest.daily", nil, nil),
				"a topic events target stays")
			// A read-edit-write sends topic and action back: the same topic.
			require.Equal(t, http.StatusOK, c.call("PUT", "/events/"+ev.ID, map[string]any{"name": "digest",
				"topic": ev.Topic, "action": ev.Action, "webhook": ""}, nil))

			occs := c.settled([]string{ev.ID}, 30*time.Second, "failed")
			require.Len(t, occs, 1)
			var occID string
			for id := range occs {
				occID = id
			}
			occ := c.fanoutOccurrence(occID)
			require.NotNil(t, occ.Fanout)
			require.Equal(t, 3, occ.Fanout.Subscriptions)
			require.Equal(t, 1, occ.Fanout.Delivered)
			require.Equal(t, 1, occ.Fanout.Filtered)
			require.Equal(t, 1, occ.Fanout.Failed)
			require.Equal(t, 0, occ.Fanout.Pending)

			require.Len(t, rcA.Requests(), 1, "subscriber A gets the firing once")
			require.Empty(t, rcB.Requests(), "subscriber B's filter said no")
			require.Len(t, rcC.Requests(), 2, "subscriber C's delivery retried once, alone")
			a := rcA.Requests()[0]
			require.True(t, verifies(t, epA.Secret, a), "signed with endpoint A's secret")
			require.False(t, verifies(t, epC.Secret, a), "and not with another's")
			require.Equal(t, occID, a.Header.Get("webhook-id"))
			var body map[string]any
			require.NoError(t, json.Unmarshal(a.Body, &body))
			require.Equal(t, "digest.daily", body["topic"])
			require.Equal(t, subA, body["subscription_id"])
			require.Equal(t, map[string]any{"region": "eu"}, body["metadata"])
			for _, r := range rcC.Requests() {
				require.True(t, verifies(t, epC.Secret, r), "signed with endpoint C's secret")
			}

			rows := c.deliveries(occID)
			require.Len(t, rows, 3)
			byID := map[string]delivery{}
			for _, d := range rows {
				byID[d.SubscriptionID] = d
			}
			require.Equal(t, "delivered", byID[subA].Status)
			require.Equal(t, epA.ID, byID[subA].EndpointID)
			require.Len(t, byID[subA].Attempts, 1)
			require.Equal(t, "filtered", byID[subB].Status)
			require.Empty(t, byID[subB].Attempts)
			require.Equal(t, "failed", byID[subC].Status)
			require.NotNil(t, byID[subC].Error)
			require.Contains(t, *byID[subC].Error, "503")
			require.Len(t, byID[subC].Attempts, 2)
			require.Equal(t, "retrying", byID[subC].Attempts[0].Outcome)
			require.Equal(t, "failed", byID[subC].Attempts[1].Outcome)

			// The receiver is back: a replay re-sends the failed delivery only.
			cFails.Store(false)
			require.Equal(t, http.StatusOK, c.call("POST", "/occurrences/"+occID+"/retry", nil, nil))
			c.settled([]string{ev.ID}, 30*time.Second, "completed")
			occ = c.fanoutOccurrence(occID)
			require.Equal(t, 2, occ.Fanout.Delivered)
			require.Equal(t, 0, occ.Fanout.Failed)
			require.Len(t, rcA.Requests(), 1, "a replay of the failures leaves the delivered alone")
			require.Len(t, rcC.Requests(), 3)
			require.True(t, verifies(t, epC.Secret, rcC.Requests()[2]))
			require.Equal(t, http.StatusConflict, c.call("POST", "/occurrences/"+occID+"/retry", nil, nil),
				"nothing failed: nothing to replay")

			// One subscription's delivery, replayed by itself.
			c.refused("POST", "/occurrences/"+occID+"/retry",
				map[string]any{"subscription_id": subB}, "subscription_id")
			require.Equal(t, http.StatusOK, c.call("POST", "/occurrences/"+occID+"/retry",
				map[string]any{"subscription_id": subA}, nil))
			qhronostest.Wait(t, 30*time.Second, "subscriber A's replay", func() bool { return len(rcA.Requests()) == 2 })
			c.settled([]string{ev.ID}, 30*time.Second, "completed")
			require.Len(t, rcC.Requests(), 3, "the other subscriptions are not sent again")
			require.Empty(t, rcB.Requests())
			rows = c.deliveries(occID)
			for _, d := range rows {
				if d.SubscriptionID == subA {
					require.Equal(t, "delivered", d.Status)
					require.Len(t, d.Attempts, 2)
					require.True(t, d.Attempts[1].Manual, "a replay is a manual attempt")
				}
			}
			var page struct {
				Data []struct {
					OccurrenceID   string `json:"occurrence_id"`
					SubscriptionID string `json:"subscription_id"`
				} `json:"data"`
			}
			require.Equal(t, http.StatusOK, c.call("GET", "/subscriptions/"+subC+"/deliveries", nil, &page))
			require.Len(t, page.Data, 3, "subscription C's attempts")
			for _, a := range page.Data {
				require.Equal(t, occID, a.OccurrenceID)
				require.Equal(t, subC, a.SubscriptionID)
			}
		})
	}
}

// TestTaggedFiringsReachTheirTenants: an event without tags goes to every
// subscriber; one tagged customer-42 goes to customer-42's subscription and
// to the installation's own (untagged) one, never to customer-43's; a
// subscription added after a firing does not receive it.
func TestTaggedFiringsReachTheirTenants(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.SQLite)
	c := client{t: t, srv: srv}
	require.Equal(t, http.StatusCreated, c.call("POST", "/topics", map[string]any{"name": "report.ready"}, nil))
	rc42, rc43, rcAll := qhronostest.NewReceiver(t), qhronostest.NewReceiver(t), qhronostest.NewReceiver(t)
	ep42 := c.createEndpoint(map[string]any{"name": "c42", "url": rc42.URL, "tags": []string{"customer-42"}})
	ep43 := c.createEndpoint(map[string]any{"name": "c43", "url": rc43.URL, "tags": []string{"customer-43"}})
	epAll := c.createEndpoint(map[string]any{"name": "ops", "url": rcAll.URL})
	for _, s := range []struct {
		ep   string
		tags []string
	}{{ep42.ID, []string{"customer-42"}}, {ep43.ID, []string{"customer-43"}}, {epAll.ID, nil}} {
		body := map[string]any{"topic": "report.ready", "endpoint_id": s.ep}
		if s.tags != nil {
			body["tags"] = s.tags
		}
		require.Equal(t, http.StatusCreated, c.call("POST", "/subscriptions", body, nil))
	}
	at := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	create := func(tags []string) string {
		var ev struct {
			ID string `json:"id"`
		}
		require.Equal(t, http.StatusCreated, c.call("POST", "/events", map[string]any{"name": "report",
			"start_time": at, "topic": "report.ready", "tags": tags}, &ev))
		return ev.ID
	}
	broadcast, tenant := create([]string{}), create([]string{"customer-42"})
	c.settled([]string{broadcast, tenant}, 30*time.Second, "completed")
	require.Len(t, rc42.Requests(), 2, "customer-42 gets the broadcast and its own")
	require.Len(t, rc43.Requests(), 1, "customer-43 gets the broadcast only")
	require.Len(t, rcAll.Requests(), 2, "the installation's subscription gets both")

	late := qhronostest.NewReceiver(t)
	epLate := c.createEndpoint(map[string]any{"name": "late", "url": late.URL})
	require.Equal(t, http.StatusCreated, c.call("POST", "/subscriptions",
		map[string]any{"topic": "report.*", "endpoint_id": epLate.ID}, nil))
	for id := range c.settled([]string{broadcast}, 5*time.Second, "completed") {
		require.Equal(t, http.StatusConflict, c.call("POST", "/occurrences/"+id+"/retry", nil, nil))
	}
	require.Empty(t, late.Requests(), "a subscription added later does not receive past firings")
}

func (c client) fanoutOccurrence(id string) fanoutOccurrence {
	c.t.Helper()
	var o fanoutOccurrence
	require.Equal(c.t, http.StatusOK, c.call("GET", "/occurrences/"+id, nil, &o))
	return o
}

func (c client) deliveries(occurrenceID string) []delivery {
	c.t.Helper()
	var page struct {
		Data []delivery `json:"data"`
	}
	require.Equal(c.t, http.StatusOK, c.call("GET", "/occurrences/"+occurrenceID+"/deliveries", nil, &page))
	return page.Data
}

// refused sends a request that must be refused with a 400 naming field.
func (c client) refused(method, path string, body any, field string) {
	c.t.Helper()
	b, err := json.Marshal(body)
	require.NoError(c.t, err)
	req, err := http.NewRequest(method, c.srv.URL+path, bytes.NewReader(b))
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+c.srv.Token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	var answer struct {
		Error string `json:"error"`
		Field string `json:"field"`
	}
	require.NoError(c.t, json.NewDecoder(res.Body).Decode(&answer))
	require.Equal(c.t, http.StatusBadRequest, res.StatusCode, "%s %s: %s", method, path, answer.Error)
	require.Equal(c.t, field, answer.Field, answer.Error)
}
