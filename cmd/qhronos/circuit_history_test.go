package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// A disable and an enable made with the CLI show in the endpoint's circuit
// history, newest first, on the cli channel; a channel's test notice shows
// in its notices with how it went.
func TestCircuitHistoryAndNoticesCommands(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		var ep client.Endpoint
		ok(t, e, &ep, "endpoints", "create", "--name", "billing", "--url", "https://billing.example.com/hooks")
		ok(t, e, nil, "endpoints", "disable", ep.ID)
		ok(t, e, nil, "endpoints", "enable", ep.ID)
		var entries []client.CircuitEntry
		ok(t, e, &entries, "endpoints", "circuit-history", ep.ID)
		require.Len(t, entries, 2)
		require.Equal(t, client.CircuitEntryChangeEnabled, entries[0].Change)
		require.Equal(t, client.CircuitEntryChangeDisabled, entries[1].Change)
		require.Equal(t, "cli", entries[1].Channel)
		ok(t, e, &entries, "endpoints", "circuit-history", ep.ID, "--limit", "1")
		require.Len(t, entries, 1)
		r := cli(t, e, "", "endpoints", "circuit-history", ep.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "CHANGE")
		require.Contains(t, r.stdout, "disabled")

		// An email channel with no mail server configured: the test fails,
		// and its notice says why.
		c, err := client.New(srv.URL, client.WithToken(srv.Token))
		require.NoError(t, err)
		ch, err := c.NotificationChannels.Create(context.Background(), client.NotificationChannelRequest{
			Name: client.Ptr("oncall"), Type: client.Ptr(client.NotificationChannelRequestTypeEmail),
			To: []string{"oncall@example.com"}})
		require.NoError(t, err)
		var res client.NotificationTestResult
		ok(t, e, &res, "notifications", "test", ch.ID)
		require.False(t, res.Delivered)
		var notices []client.SentNotice
		ok(t, e, &notices, "notifications", "notices", ch.ID)
		require.Len(t, notices, 1)
		require.Equal(t, client.SentNoticeOutcomeFailed, notices[0].Outcome)
		require.True(t, notices[0].Test)
		require.Contains(t, notices[0].Answer, "mail server")
		var chans []client.NotificationChannel
		ok(t, e, &chans, "notifications", "list")
		require.Len(t, chans, 1)
		r = cli(t, e, "", "notifications", "notices", "00000000-0000-4000-8000-000000000000")
		require.Equal(t, exitNotFound, r.code, r.stderr)
	})
}
