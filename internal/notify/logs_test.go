package notify_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/qhronos/qhronos/internal/notify"
)

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// TestFailedNoticeLogsTheHostOnly: a channel URL's path and query may carry
// secrets; when a notice fails the log names the host and nothing more.
func TestFailedNoticeLogsTheHostOnly(t *testing.T) {
	t.Parallel()
	host := closedPort(t)
	for i, url := range []string{
		"http://" + host + "/hooks/pathsecret?token=querysecret",                // refused connection
		"http://user:pwsecret@" + host + "/hooks/pathsecret%zz?sig=querysecret", // unparsable
	} {
		core, logs := observer.New(zapcore.DebugLevel)
		n := notify.New(notify.Deps{Channels: []notify.Channel{{ID: "config:ops", Name: "ops", Type: "webhook",
			URL: url, Secret: testSecret}}, HTTP: loopbackClient(), Now: newClock().Now, Logger: zap.New(core)},
			notify.Options{WebhookAttempts: 1})
		n.Notify(context.Background(), circuitOpened("ep-1"))
		n.RunOnce(context.Background())

		entries := logs.FilterMessage("notice not sent").All()
		require.Len(t, entries, 1, "the failure is logged once")
		var all strings.Builder
		for _, e := range logs.All() {
			all.WriteString(e.Message)
			for k, v := range e.ContextMap() {
				all.WriteString(" " + k + "=")
				all.WriteString(toString(v))
			}
		}
		got := all.String()
		if i == 0 {
			require.Contains(t, got, host, "the log says where the notice went")
		}
		for _, secret := range []string{"pathsecret", "querysecret", "pwsecret", "/hooks"} {
			require.NotContains(t, got, secret, "log of %s: %s", url, got)
		}
	}
}

func toString(v any) string { return fmt.Sprint(v) }
