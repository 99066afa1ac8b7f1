package receiver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/receiver"
)

// A receiver built with the kit answers a callback event's delivery 202,
// then, holding only what the delivery carried, keeps the run alive and
// completes it: the occurrence ends completed with the run's output, a
// repeat of the report is accepted, and the run being over is ErrRunOver.
func TestCallbackRunWithTheKit(t *testing.T) {
	t.Parallel()
	for _, b := range qhronostest.Backends() {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			srv := qhronostest.Start(t, b)
			c, err := client.New(srv.URL, client.WithToken(srv.Token))
			require.NoError(t, err)
			ctx := qhronostest.Context(t, 60*time.Second)

			type delivery struct {
				d      receiver.Delivery
				header string
			}
			deliveries := make(chan delivery, 8)
			hook := httptest.NewServer(receiver.NewVerifier([]string{srv.DefaultSecret}).Middleware(
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					d, err := receiver.ParseDelivery(body)
					if err != nil {
						http.Error(w, err.Error(), http.StatusBadRequest)
						return
					}
					w.WriteHeader(http.StatusAccepted) // the run starts; the work goes on after
					deliveries <- delivery{d, r.Header.Get(receiver.HeaderRunToken)}
				})))
			t.Cleanup(hook.Close)

			ev, err := c.Events.Create(ctx, client.EventInput{Name: client.Ptr("export"), StartTime: client.Ptr("in 1 hour"),
				Webhook: client.Ptr(hook.URL + "/jobs/export"), Completion: client.Ptr(client.EventInputCompletionCallback),
				MaxRuntime: client.Ptr("30m")})
			require.NoError(t, err)
			occ, err := c.Events.Trigger(ctx, ev.ID)
			require.NoError(t, err)
			var got delivery
			select {
			case got = <-deliveries:
			case <-ctx.Done():
				t.Fatal("no delivery within 60 s")
			}
			run := got.d.Run
			require.Equal(t, occ.ID, got.d.OccurrenceID)
			require.NotNil(t, run, "a callback event's delivery carries its run")
			require.Equal(t, got.header, run.Token, "the header and the payload carry the same token")
			require.Equal(t, srv.URL+"/occurrences/"+occ.ID+"/complete", run.CompleteURL)
			require.Equal(t, srv.URL+"/occurrences/"+occ.ID+"/heartbeat", run.HeartbeatURL)
			require.WithinDuration(t, time.Now().Add(30*time.Minute), run.Deadline, 5*time.Minute)

			qhronostest.Wait(t, 60*time.Second, "the accepted delivery starts the run", func() bool {
				o, err := c.Occurrences.Get(ctx, occ.ID)
				require.NoError(t, err)
				return o.Status == client.OccurrenceStatusRunning
			})
			deadline, err := run.Heartbeat(ctx)
			require.NoError(t, err)
			require.False(t, deadline.Before(run.Deadline), "the heartbeat moves the deadline on: %s, was %s", deadline, run.Deadline)

			output := map[string]any{"rows": 42, "file": "s3://exports/2030-01-01.csv"}
			require.NoError(t, run.Complete(ctx, receiver.RunSucceeded, output))
			o, err := c.Occurrences.Get(ctx, occ.ID)
			require.NoError(t, err)
			require.Equal(t, client.OccurrenceStatusCompleted, o.Status)
			require.Equal(t, client.RunStatusSucceeded, *o.Run.Status)
			require.JSONEq(t, `{"rows":42,"file":"s3://exports/2030-01-01.csv"}`, string(*o.Run.Output))

			require.NoError(t, run.Complete(ctx, receiver.RunSucceeded, output), "the same report again")
			require.ErrorIs(t, run.Complete(ctx, receiver.RunFailed, nil), receiver.ErrRunOver)
			_, err = run.Heartbeat(ctx)
			require.ErrorIs(t, err, receiver.ErrRunOver)
		})
	}
}

// A delivery of an event that completes by response has no run; a
// callback event's carries one, its deadline parsed.
func TestParseDeliveryRun(t *testing.T) {
	t.Parallel()
	d, err := receiver.ParseDelivery([]byte(`{"event_id":"e","occurrence_id":"o","attempt":1,"metadata":null,"tags":[]}`))
	require.NoError(t, err)
	require.Nil(t, d.Run)
	require.ErrorContains(t, d.Run.Complete(context.Background(), receiver.RunSucceeded, nil), "completes by response")
	_, err = d.Run.Heartbeat(context.Background())
	require.ErrorContains(t, err, "completes by response")

	d, err = receiver.ParseDelivery([]byte(`{"event_id":"e","occurrence_id":"o","attempt":1,"metadata":null,"tags":[],
		"run":{"token":"qrun_x","complete_url":"https://q.example.com/occurrences/o/complete",
		"heartbeat_url":"https://q.example.com/occurrences/o/heartbeat","deadline":"2030-01-02T03:04:05.123456Z"}}`))
	require.NoError(t, err)
	require.Equal(t, &receiver.RunInfo{Token: "qrun_x", CompleteURL: "https://q.example.com/occurrences/o/complete",
		HeartbeatURL: "https://q.example.com/occurrences/o/heartbeat",
		Deadline:     time.Date(2030, 1, 2, 3, 4, 5, 123456000, time.UTC)}, d.Run)
}

// Complete and Heartbeat send the run token and the report through the
// run's HTTP client, and name what Qhronos refused.
func TestRunCalls(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Content-Type")+" "+string(body))
		code := status
		mu.Unlock()
		w.WriteHeader(code)
		switch code {
		case http.StatusOK:
			_, _ = w.Write([]byte(`{"id":"o","status":"running","run":{"deadline":"2030-01-01T01:00:00Z"}}`))
		case http.StatusConflict:
			_, _ = w.Write([]byte(`{"error":"occurrence is timed_out; its run is over"}`))
		default:
			_, _ = w.Write([]byte(`{"error":"invalid token"}`))
		}
	}))
	t.Cleanup(srv.Close)
	answer := func(code int) {
		mu.Lock()
		defer mu.Unlock()
		status = code
	}
	used := 0
	run := &receiver.RunInfo{Token: "qrun_x", CompleteURL: srv.URL + "/occurrences/o/complete",
		HeartbeatURL: srv.URL + "/occurrences/o/heartbeat",
		HTTPClient: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			used++
			return http.DefaultTransport.RoundTrip(r)
		})}}
	ctx := context.Background()

	deadline, err := run.Heartbeat(ctx)
	require.NoError(t, err)
	require.Equal(t, time.Date(2030, 1, 1, 1, 0, 0, 0, time.UTC), deadline)
	require.NoError(t, run.Complete(ctx, receiver.RunSucceeded, json.RawMessage(`{"rows": 42}`)))
	require.NoError(t, run.Complete(ctx, receiver.RunFailed, nil))
	mu.Lock()
	sent := append([]string(nil), got...)
	mu.Unlock()
	require.Equal(t, []string{
		"/occurrences/o/heartbeat Bearer qrun_x  ",
		`/occurrences/o/complete Bearer qrun_x application/json {"status":"succeeded","output":{"rows":42}}`,
		`/occurrences/o/complete Bearer qrun_x application/json {"status":"failed"}`,
	}, sent)
	require.Equal(t, 3, used, "every call goes through the run's HTTP client")

	answer(http.StatusConflict)
	err = run.Complete(ctx, receiver.RunSucceeded, nil)
	require.ErrorIs(t, err, receiver.ErrRunOver)
	require.ErrorContains(t, err, "timed_out")
	answer(http.StatusUnauthorized)
	_, err = run.Heartbeat(ctx)
	require.NotErrorIs(t, err, receiver.ErrRunOver)
	require.ErrorContains(t, err, "401: invalid token")
	require.NotContains(t, err.Error(), "qrun_x", "errors never show the token")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
