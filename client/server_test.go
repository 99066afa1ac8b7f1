package client_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }

// onBackends runs f against a real qhronosd on each store.
func onBackends(t *testing.T, f func(t *testing.T, srv *qhronostest.Server, c *client.Client)) {
	for _, b := range qhronostest.Backends() {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			srv := qhronostest.Start(t, b)
			c, err := client.New(srv.URL, client.WithToken(srv.Token))
			require.NoError(t, err)
			f(t, srv, c)
		})
	}
}

func createEvents(t *testing.T, c *client.Client, n int, tag, hook string) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		ev, err := c.Events.Create(qhronostest.Context(t, 10*time.Second), client.EventInput{
			Name: client.Ptr("page"), StartTime: client.Ptr(time.Now().Add(time.Hour).UTC().Format(time.RFC3339)),
			Webhook: client.Ptr(hook), Tags: []string{tag}})
		require.NoError(t, err)
		ids[i] = ev.ID
	}
	return ids
}

// Cursor pagination walks every event and occurrence exactly once, across
// pages, in the server's order.
func TestPaginationAgainstServer(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server, c *client.Client) {
		ctx := qhronostest.Context(t, 30*time.Second)
		tag := "page-" + qhronostest.RandomHex(t, 4)
		ids := createEvents(t, c, 7, tag, qhronostest.NewReceiver(t).URL)

		first, err := c.Events.List(ctx, client.ListEventsParams{Tags: []string{tag}, Limit: client.Ptr(3)})
		require.NoError(t, err)
		require.Len(t, first.Items, 3)
		require.NotEmpty(t, first.NextCursor, "a first page of 3 out of 7 advertises the next")

		var got []string
		for ev, err := range c.Events.All(ctx, client.ListEventsParams{Tags: []string{tag}, Limit: client.Ptr(3)}) {
			require.NoError(t, err)
			got = append(got, ev.ID)
		}
		want := make([]string, len(ids))
		for i, id := range ids {
			want[len(ids)-1-i] = id // newest first
		}
		require.Equal(t, want, got)

		seen := map[string]bool{}
		for occ, err := range c.Occurrences.All(ctx, client.ListOccurrencesParams{Tags: []string{tag}, Limit: client.Ptr(2)}) {
			require.NoError(t, err)
			require.False(t, seen[occ.ID], "occurrence %s listed twice", occ.ID)
			seen[occ.ID] = true
		}
		require.Len(t, seen, 7)

		n := 0
		for _, err := range c.Events.AllOccurrences(ctx, ids[0], client.ListEventOccurrencesParams{Limit: client.Ptr(1)}) {
			require.NoError(t, err)
			n++
		}
		require.Equal(t, 1, n)
	})
}

// The server's refusals arrive as typed errors naming the field.
func TestTypedErrorsAgainstServer(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server, c *client.Client) {
		ctx := qhronostest.Context(t, 30*time.Second)
		_, err := c.Events.Get(ctx, "6f1c1d4e-9a0b-4c1e-8f00-000000000000")
		require.ErrorIs(t, err, client.ErrNotFound)

		_, err = c.Events.Create(ctx, client.EventInput{Name: client.Ptr("past"),
			StartTime: client.Ptr("2001-01-01T00:00:00Z"), Webhook: client.Ptr("https://example.com/h")})
		var apiErr *client.APIError
		require.ErrorAs(t, err, &apiErr)
		require.ErrorIs(t, err, client.ErrBadRequest)
		require.Equal(t, "start_time", apiErr.Field, "%+v", apiErr)

		bad, err := client.New(srv.URL, client.WithToken("not-a-token"))
		require.NoError(t, err)
		_, err = bad.Events.List(ctx, client.ListEventsParams{})
		require.ErrorIs(t, err, client.ErrUnauthorized)

		id := createEvents(t, c, 1, "etag", "https://example.com/h")[0]
		_, etag, err := c.Events.GetWithETag(ctx, id)
		require.NoError(t, err)
		_, err = c.Events.Update(ctx, id, client.EventInput{Description: client.Ptr("one")}, client.IfMatch(etag))
		require.NoError(t, err)
		_, err = c.Events.Update(ctx, id, client.EventInput{Description: client.Ptr("two")}, client.IfMatch(etag))
		require.ErrorIs(t, err, client.ErrPreconditionFailed, "a stale ETag")

		require.NoError(t, c.Events.Delete(ctx, id))
		_, err = c.Events.Get(ctx, id)
		require.ErrorIs(t, err, client.ErrNotFound, "a deleted event")
		ev, err := c.Events.GetIncludingDeleted(ctx, id)
		require.NoError(t, err)
		require.Equal(t, client.EventStatusDeleted, ev.Status, "a deleted event, asked for")
	})
}

// dropFirstAnswer is a proxy to the server that lets the first POST /events
// reach it and then cuts the connection before the answer gets back: the
// client cannot know whether the event was created.
func dropFirstAnswer(t *testing.T, upstream string) string {
	target, err := url.Parse(upstream)
	require.NoError(t, err)
	var dropped atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.RequestURI, out.Host = target.Scheme, target.Host, "", target.Host
		res, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		if r.Method == http.MethodPost && r.URL.Path == "/events" && dropped.CompareAndSwap(false, true) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL
}

// A create whose answer is lost is retried with the same Idempotency-Key:
// the server replays its first answer and exactly one event exists.
func TestIdempotentRetryAgainstServer(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server, _ *client.Client) {
		ctx := qhronostest.Context(t, 30*time.Second)
		c, err := client.New(dropFirstAnswer(t, srv.URL), client.WithToken(srv.Token),
			client.WithBackoff(10*time.Millisecond, time.Second))
		require.NoError(t, err)
		tag := "idem-" + qhronostest.RandomHex(t, 4)
		ev, err := c.Events.Create(ctx, client.EventInput{Name: client.Ptr("once"),
			StartTime: client.Ptr("in 1 hour"), Webhook: client.Ptr("https://example.com/h"), Tags: []string{tag}})
		require.NoError(t, err, "the retry succeeds")
		page, err := c.Events.List(ctx, client.ListEventsParams{Tags: []string{tag}})
		require.NoError(t, err)
		require.Len(t, page.Items, 1, "one event, not one per attempt")
		require.Equal(t, ev.ID, page.Items[0].ID)
	})
}

// The document the contract tests check the client against is the one the
// server serves.
func TestServedDocumentIsTheCheckedOne(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.SQLite)
	c, err := client.New(srv.URL)
	require.NoError(t, err)
	served, err := c.OpenAPI(qhronostest.Context(t, 10*time.Second))
	require.NoError(t, err)
	file, err := os.ReadFile(documentPath)
	require.NoError(t, err)
	require.JSONEq(t, string(file), string(served))
}
