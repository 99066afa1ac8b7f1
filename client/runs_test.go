package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// runToken triggers eventID and returns the occurrence and the run token
// its delivery to rc carried, once the server records the run as started.
func runToken(t *testing.T, c *client.Client, rc *qhronostest.Receiver, eventID string) (*client.Occurrence, string) {
	t.Helper()
	ctx := qhronostest.Context(t, 60*time.Second)
	occ, err := c.Events.Trigger(ctx, eventID)
	require.NoError(t, err)
	var token string
	qhronostest.Wait(t, 60*time.Second, "the delivery arrives", func() bool {
		for _, r := range rc.Requests() {
			if strings.Contains(string(r.Body), occ.ID) {
				token = r.Header.Get("Qhronos-Run-Token")
				return true
			}
		}
		return false
	})
	require.True(t, strings.HasPrefix(token, "qrun_"), "run token %q", token)
	qhronostest.Wait(t, 60*time.Second, "the accepted delivery starts the run", func() bool {
		occ, err = c.Occurrences.Get(ctx, occ.ID)
		require.NoError(t, err)
		return occ.Status == client.OccurrenceStatusRunning
	})
	return occ, token
}

// A callback event's occurrence runs from its accepted delivery until the
// receiver, holding only the delivery's run token, reports it: a heartbeat
// moves the deadline, the report completes it with its output, the same
// report again is accepted and another is a conflict. A run token opens
// only its own occurrence; a write token may report any run.
func TestCallbackRunsAgainstServer(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server, c *client.Client) {
		ctx := qhronostest.Context(t, 60*time.Second)
		rc := qhronostest.NewReceiver(t)
		rc.Answer(func(qhronostest.Request) int { return http.StatusAccepted })
		ev, err := c.Events.Create(ctx, client.EventInput{Name: client.Ptr("export"), StartTime: client.Ptr("in 1 hour"),
			Webhook: client.Ptr(rc.URL), Completion: client.Ptr(client.EventInputCompletionCallback),
			MaxRuntime: client.Ptr("30m")})
		require.NoError(t, err)
		require.Equal(t, client.EventCompletionCallback, *ev.Completion)
		require.Equal(t, "30m0s", *ev.MaxRuntime)

		occ, token := runToken(t, c, rc, ev.ID)
		require.NotNil(t, occ.Run)
		require.NotNil(t, occ.Run.Deadline)
		require.WithinDuration(t, time.Now().Add(30*time.Minute), *occ.Run.Deadline, 5*time.Minute)

		// The receiver has no API token: a client without one, and the run token per call.
		runner, err := client.New(srv.URL)
		require.NoError(t, err)
		_, err = runner.Occurrences.Heartbeat(ctx, occ.ID)
		require.ErrorIs(t, err, client.ErrUnauthorized, "no token at all")
		beat, err := runner.Occurrences.Heartbeat(ctx, occ.ID, client.RunToken(token))
		require.NoError(t, err)
		require.Equal(t, client.OccurrenceStatusRunning, beat.Status)
		require.NotNil(t, beat.Run.HeartbeatAt)
		require.False(t, beat.Run.Deadline.Before(*occ.Run.Deadline), "the heartbeat moves the deadline on: %s, was %s",
			beat.Run.Deadline, occ.Run.Deadline)

		report := client.RunReport{Status: client.RunReportStatusSucceeded, Output: map[string]any{"rows": 42}}
		done, err := runner.Occurrences.Complete(ctx, occ.ID, report, client.RunToken(token))
		require.NoError(t, err)
		require.Equal(t, client.OccurrenceStatusCompleted, done.Status)
		require.Equal(t, client.RunStatusSucceeded, *done.Run.Status)
		require.NotNil(t, done.Run.Output)
		require.JSONEq(t, `{"rows":42}`, string(*done.Run.Output))
		require.NotNil(t, done.Run.DurationMs)
		require.NotNil(t, done.Run.ReportedAt)

		again, err := runner.Occurrences.Complete(ctx, occ.ID, report, client.RunToken(token))
		require.NoError(t, err, "the same report again")
		require.Equal(t, client.OccurrenceStatusCompleted, again.Status)
		_, err = runner.Occurrences.Complete(ctx, occ.ID, client.RunReport{Status: client.RunReportStatusFailed},
			client.RunToken(token))
		require.ErrorIs(t, err, client.ErrConflict, "another report after the end")
		_, err = runner.Occurrences.Heartbeat(ctx, occ.ID, client.RunToken(token))
		require.ErrorIs(t, err, client.ErrConflict, "a heartbeat after the end")

		// A second run: its neighbour's token does not open it; the
		// client's own (master) token reports it, failed, with raw JSON.
		other, _ := runToken(t, c, rc, ev.ID)
		_, err = runner.Occurrences.Complete(ctx, other.ID, report, client.RunToken(token))
		require.ErrorIs(t, err, client.ErrUnauthorized, "the run token of another occurrence")
		failed, err := c.Occurrences.Complete(ctx, other.ID, client.RunReport{Status: client.RunReportStatusFailed,
			Output: json.RawMessage(`{"error":"disk full"}`)})
		require.NoError(t, err)
		require.Equal(t, client.OccurrenceStatusFailed, failed.Status)
		require.JSONEq(t, `{"error":"disk full"}`, string(*failed.Run.Output))

		// Back to completion by response: max_runtime goes with it.
		ev, err = c.Events.Update(ctx, ev.ID, client.EventInput{Completion: client.Ptr(client.EventInputCompletionResponse)})
		require.NoError(t, err)
		require.Equal(t, client.EventCompletionResponse, *ev.Completion)
		require.Nil(t, ev.MaxRuntime)

		var apiErr *client.APIError
		_, err = c.Events.Create(ctx, client.EventInput{Name: client.Ptr("ws"), StartTime: client.Ptr("in 1 hour"),
			Webhook: client.Ptr("q:frames"), Completion: client.Ptr(client.EventInputCompletionCallback)})
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, "completion", apiErr.Field, "a WebSocket action acknowledges instead: %+v", apiErr)
	})
}

// RunToken replaces the client's token for its call only; Complete is
// retried on 503 as a repeat of the same report is harmless.
func TestRunTokenAndRetries(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var auth []string
	failFirst := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		auth = append(auth, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		if failFirst && strings.HasSuffix(r.URL.Path, "/complete") {
			failFirst = false
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"id":"o1","event_id":"e1","scheduled_at":"2030-01-01T00:00:00Z","status":"completed","attempt_count":1}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, client.WithToken("api-token"), client.WithBackoff(time.Millisecond, time.Second))
	require.NoError(t, err)
	ctx := context.Background()

	occ, err := c.Occurrences.Complete(ctx, "o1", client.RunReport{Status: client.RunReportStatusSucceeded}, client.RunToken("qrun_a"))
	require.NoError(t, err)
	require.Equal(t, client.OccurrenceStatusCompleted, occ.Status)
	_, err = c.Occurrences.Heartbeat(ctx, "o1")
	require.NoError(t, err)
	require.Equal(t, []string{
		"POST /occurrences/o1/complete Bearer qrun_a",
		"POST /occurrences/o1/complete Bearer qrun_a",
		"POST /occurrences/o1/heartbeat Bearer api-token",
	}, auth, "the retry keeps the run token; the next call goes with the client's")
}
