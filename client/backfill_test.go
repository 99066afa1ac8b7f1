package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// Events.Backfill creates the missing past instants once; its refusals are
// typed errors a caller can branch on.
func TestBackfillAgainstServer(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server, c *client.Client) {
		ctx := qhronostest.Context(t, 30*time.Second)
		start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		ev, err := c.Events.Create(ctx, client.EventInput{Name: client.Ptr("hourly"),
			StartTime: client.Ptr(start.Format(time.RFC3339)), Rrule: client.Ptr("FREQ=HOURLY"),
			Webhook: client.Ptr("https://example.com/h")})
		require.NoError(t, err)
		in := client.BackfillRequest{From: start.Add(-5 * time.Hour), To: start.Add(-2 * time.Hour)}

		res, err := c.Events.Backfill(ctx, ev.ID, in)
		require.NoError(t, err)
		require.Equal(t, ev.ID, res.EventID)
		require.Equal(t, 4, res.Instants, "both ends included: -5h, -4h, -3h, -2h")
		require.Equal(t, 4, res.Created)
		require.True(t, res.From.Equal(in.From) && res.To.Equal(in.To), "%+v", res)

		res, err = c.Events.Backfill(ctx, ev.ID, in)
		require.NoError(t, err)
		require.Equal(t, 0, res.Created, "a second backfill of the range creates nothing")
		require.Equal(t, 4, res.Existing)

		var apiErr *client.APIError
		_, err = c.Events.Backfill(ctx, ev.ID, client.BackfillRequest{From: in.From, To: time.Now().Add(time.Hour)})
		require.ErrorIs(t, err, client.ErrBadRequest)
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, "to", apiErr.Field, "%+v", apiErr)

		_, err = c.Events.Backfill(ctx, ev.ID, client.BackfillRequest{From: in.To, To: in.From})
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, "from", apiErr.Field, "from after to: %+v", apiErr)

		once, err := c.Events.Create(ctx, client.EventInput{Name: client.Ptr("once"), StartTime: client.Ptr("in 1 hour"),
			Webhook: client.Ptr("https://example.com/h")})
		require.NoError(t, err)
		_, err = c.Events.Backfill(ctx, once.ID, in)
		require.ErrorIs(t, err, client.ErrConflict, "a one-time event has no pattern")

		_, err = c.Events.Backfill(ctx, "6f1c1d4e-9a0b-4c1e-8f00-000000000000", in)
		require.ErrorIs(t, err, client.ErrNotFound)
	})
}

// A backfill a repeat leaves as it was is retried on 503, as a PUT is.
func TestBackfillIsRetried(t *testing.T) {
	t.Parallel()
	s := &scripted{statuses: []int{503, 202}, body: `{"event_id":"e1","instants":2,"created":0,"existing":2}`}
	res, err := newScripted(t, s).Events.Backfill(context.Background(), "e1",
		client.BackfillRequest{From: time.Now().Add(-time.Hour), To: time.Now()})
	require.NoError(t, err)
	require.Equal(t, 2, res.Existing)
	require.Len(t, s.calls(), 2, "one retry after the 503")
}
