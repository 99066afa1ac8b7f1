package client_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// Two callback events share the concurrency key customer-42: the key's
// limit is the smaller they name, a run of one holds its only slot while
// the other's occurrence waits, a pause keeps the waiter waiting after the
// slot is freed and a resume lets it run. Keys list in key order across
// pages; a key no event names any more is ErrNotFound, a bad limit a 400
// naming concurrency.limit.
func TestConcurrencyKeysAgainstServer(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server, c *client.Client) {
		ctx := qhronostest.Context(t, 120*time.Second)
		rc := qhronostest.NewReceiver(t)
		rc.Answer(func(qhronostest.Request) int { return http.StatusAccepted }) // each run stays running
		create := func(name string, conc *client.Concurrency) (*client.Event, error) {
			return c.Events.Create(ctx, client.EventInput{Name: client.Ptr(name), StartTime: client.Ptr("in 1 hour"),
				Webhook: client.Ptr(rc.URL), Completion: client.Ptr(client.EventInputCompletionCallback), Concurrency: conc})
		}

		for _, limit := range []int{0, 1001} {
			_, err := create("bad", &client.Concurrency{Key: "customer-42", Limit: limit})
			var apiErr *client.APIError
			require.ErrorAs(t, err, &apiErr, "limit %d", limit)
			require.ErrorIs(t, err, client.ErrBadRequest)
			require.Equal(t, "concurrency.limit", apiErr.Field, "%+v", apiErr)
		}

		a, err := create("sync a", &client.Concurrency{Key: "customer-42", Limit: 2})
		require.NoError(t, err)
		require.Equal(t, &client.Concurrency{Key: "customer-42", Limit: 2}, a.Concurrency)
		b, err := create("sync b", &client.Concurrency{Key: "customer-42", Limit: 1})
		require.NoError(t, err)
		other, err := create("sync c", &client.Concurrency{Key: "customer-7", Limit: 3})
		require.NoError(t, err)
		_, err = create("sync d", &client.Concurrency{Key: "customer-9", Limit: 3})
		require.NoError(t, err)

		k, err := c.ConcurrencyKeys.Get(ctx, "customer-42")
		require.NoError(t, err)
		require.Equal(t, client.ConcurrencyKey{Key: "customer-42", Limit: 1}, *k, "the smallest limit, nothing in flight")

		first, err := c.ConcurrencyKeys.List(ctx, client.ListConcurrencyKeysParams{Limit: client.Ptr(2)})
		require.NoError(t, err)
		require.Len(t, first.Items, 2)
		require.NotEmpty(t, first.NextCursor, "a first page of 2 out of 3 advertises the next")
		var keys []string
		for k, err := range c.ConcurrencyKeys.All(ctx, client.ListConcurrencyKeysParams{Limit: client.Ptr(1)}) {
			require.NoError(t, err)
			keys = append(keys, k.Key)
		}
		require.Equal(t, []string{"customer-42", "customer-7", "customer-9"}, keys, "key order, every page")

		// a's run takes the key's one slot; b's occurrence waits for it.
		runA := running(ctx, t, c, a.ID)
		occB, err := c.Events.Trigger(ctx, b.ID)
		require.NoError(t, err)
		k = waitKey(ctx, t, c, "customer-42", "b's occurrence waits", func(k *client.ConcurrencyKey) bool { return k.Waiting == 1 })
		require.Equal(t, 1, k.InFlight)
		waiter, err := c.Occurrences.Get(ctx, occB.ID)
		require.NoError(t, err)
		require.Equal(t, client.OccurrenceStatusPending, waiter.Status)
		require.Equal(t, client.OccurrenceReasonConcurrencyWait, *waiter.Reason)

		k, err = c.ConcurrencyKeys.Pause(ctx, "customer-42")
		require.NoError(t, err)
		require.True(t, k.Paused)
		require.NotNil(t, k.PausedAt)
		require.NotNil(t, k.PausedBy)
		_, err = c.Occurrences.Complete(ctx, runA, client.RunReport{Status: client.RunReportStatusSucceeded})
		require.NoError(t, err)
		k = waitKey(ctx, t, c, "customer-42", "a's completion frees its slot", func(k *client.ConcurrencyKey) bool { return k.InFlight == 0 })
		require.Equal(t, 1, k.Waiting, "a paused key lets nobody take the free slot")

		k, err = c.ConcurrencyKeys.Resume(ctx, "customer-42")
		require.NoError(t, err)
		require.False(t, k.Paused)
		require.Nil(t, k.PausedAt)
		waitKey(ctx, t, c, "customer-42", "the resume lets b run", func(k *client.ConcurrencyKey) bool {
			return k.InFlight == 1 && k.Waiting == 0
		})

		// A key lives as long as an event names it.
		_, err = c.Events.UpdateFields(ctx, other.ID, map[string]any{"concurrency": nil})
		require.NoError(t, err)
		_, err = c.ConcurrencyKeys.Get(ctx, "customer-7")
		require.ErrorIs(t, err, client.ErrNotFound)
		_, err = c.ConcurrencyKeys.Pause(ctx, "no-such-key")
		require.ErrorIs(t, err, client.ErrNotFound)
	})
}

// running triggers eventID and returns its occurrence once its run started.
func running(ctx context.Context, t *testing.T, c *client.Client, eventID string) string {
	t.Helper()
	occ, err := c.Events.Trigger(ctx, eventID)
	require.NoError(t, err)
	qhronostest.Wait(t, 60*time.Second, "the accepted delivery starts the run", func() bool {
		occ, err = c.Occurrences.Get(ctx, occ.ID)
		require.NoError(t, err)
		return occ.Status == client.OccurrenceStatusRunning
	})
	return occ.ID
}

// waitKey reads key until cond holds and returns it.
func waitKey(ctx context.Context, t *testing.T, c *client.Client, key, what string,
	cond func(*client.ConcurrencyKey) bool) *client.ConcurrencyKey {
	t.Helper()
	var k *client.ConcurrencyKey
	qhronostest.Wait(t, 60*time.Second, what, func() bool {
		var err error
		k, err = c.ConcurrencyKeys.Get(ctx, key)
		require.NoError(t, err)
		return cond(k)
	})
	return k
}
