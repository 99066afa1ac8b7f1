package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// TestEventsListByCalendarAndEndpoint: events list --calendar and
// --endpoint list the events that honour a calendar or deliver through an
// endpoint, and nothing else.
func TestEventsListByCalendarAndEndpoint(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		ctx := context.Background()
		c, err := client.New(srv.URL, client.WithToken(srv.Token))
		require.NoError(t, err)
		rc := qhronostest.NewReceiver(t)
		tag := "cli-" + qhronostest.RandomHex(t, 4)
		cal, err := c.Calendars.Create(ctx, client.CalendarInput{Name: "holidays", Dates: []string{"2031-12-25"}, Tags: []string{tag}})
		require.NoError(t, err)
		ep, err := c.Endpoints.Create(ctx, client.EndpointInput{Name: "hooks", URL: rc.URL, Tags: []string{tag}})
		require.NoError(t, err)
		start := time.Now().Add(time.Hour).UTC()
		var withCal, withEp client.Event
		for _, body := range []struct {
			out  *client.Event
			data map[string]any
		}{
			{&withCal, map[string]any{"name": "uses the calendar", "webhook": rc.URL,
				"calendars": []map[string]string{{"id": cal.ID, "policy": "skip"}}}},
			{&withEp, map[string]any{"name": "uses the endpoint",
				"action": map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": ep.ID}}}},
			{&client.Event{}, map[string]any{"name": "uses neither", "webhook": rc.URL}},
		} {
			body.data["start_time"], body.data["tags"] = start.Format(time.RFC3339), []string{tag}
			*body.out = postEvent(t, srv, body.data)
		}
		var evs []client.Event
		ok(t, e, &evs, "events", "list", "--calendar", cal.ID)
		require.Len(t, evs, 1)
		require.Equal(t, withCal.ID, evs[0].ID)
		ok(t, e, &evs, "events", "list", "--endpoint", ep.ID)
		require.Len(t, evs, 1)
		require.Equal(t, withEp.ID, evs[0].ID)
		r := cli(t, e, "", "events", "list", "--calendar", "not-an-id")
		require.NotEqual(t, 0, r.code)
		require.Contains(t, r.stderr, "calendar_id")
	})
}

// postEvent creates an event with a raw body (members the CLI's create
// flags do not cover).
func postEvent(t *testing.T, srv *qhronostest.Server, body map[string]any) client.Event {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest("POST", srv.URL+"/events", bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.Token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var ev client.Event
	require.Equal(t, http.StatusCreated, res.StatusCode)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&ev))
	return ev
}

// TestEventsListByTopic: events list --topic lists the events that target
// a topic — what keeps `topics delete` refused — and neither another
// topic's nor a webhook event; it combines with --tag and --all, and a
// name that is not a topic name is the server's 400 naming topic.
func TestEventsListByTopic(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		ok(t, e, nil, "topics", "create", "digest.daily")
		ok(t, e, nil, "topics", "create", "digest.weekly")
		rc := qhronostest.NewReceiver(t)
		start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		var want []string
		for _, body := range []map[string]any{
			{"name": "morning digest", "topic": "digest.daily", "tags": []string{"eu"}},
			{"name": "evening digest", "topic": "digest.daily", "tags": []string{"us"}},
			{"name": "weekly digest", "topic": "digest.weekly"},
			{"name": "plain hook", "webhook": rc.URL},
		} {
			body["start_time"] = start
			ev := postEvent(t, srv, body)
			if body["topic"] == "digest.daily" {
				want = append(want, ev.ID)
			}
		}
		ids := func(evs []client.Event) []string {
			var out []string
			for _, ev := range evs {
				out = append(out, ev.ID)
			}
			return out
		}
		var evs []client.Event
		ok(t, e, &evs, "events", "list", "--topic", "digest.daily")
		require.ElementsMatch(t, want, ids(evs))
		ok(t, e, &evs, "events", "list", "--topic", "digest.daily", "--all", "--limit", "1")
		require.ElementsMatch(t, want, ids(evs), "every page")
		ok(t, e, &evs, "events", "list", "--topic", "digest.daily", "--tag", "us")
		require.Len(t, evs, 1)
		require.Equal(t, "evening digest", evs[0].Name)
		ok(t, e, &evs, "events", "list", "--topic", "digest.monthly")
		require.Empty(t, evs)

		r := cli(t, e, "", "events", "list", "--topic", "digest.weekly")
		require.Equal(t, 0, r.code, r.stderr)
		rows := dataRows(r.stdout)
		require.Len(t, rows, 1, r.stdout)
		require.Contains(t, r.stdout, "weekly digest")
		require.Contains(t, r.stdout, "topic digest.weekly")
		r = cli(t, e, "", "events", "list", "--topic", "Digest Daily")
		require.NotEqual(t, 0, r.code)
		require.Contains(t, r.stderr, "topic")
		require.Contains(t, r.stderr, "a-z 0-9")
	})
}
