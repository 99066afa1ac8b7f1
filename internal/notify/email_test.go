package notify_test

import (
	"context"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/notify"
	"github.com/qhronos/qhronos/internal/notify/notifytest"
)

const (
	smtpUser     = "qhronos"
	smtpPassword = "smtp-password-0123"
)

// newMailbox starts a mailbox that offers STARTTLS and requires AUTH PLAIN.
func newMailbox(t testing.TB) *notifytest.Mailbox {
	t.Helper()
	return notifytest.NewMailbox(t, notifytest.Options{STARTTLS: true, Username: smtpUser, Password: smtpPassword})
}

func smtpConfig(mb *notifytest.Mailbox) notify.SMTP {
	return notify.SMTP{Addr: mb.Addr, Username: smtpUser, Password: smtpPassword, From: "qhronos@example.com",
		TLS: "starttls", TLSConfig: mb.ClientTLS()}
}

// decodeQP undoes quoted-printable soft breaks and escapes in a body.
func decodeQP(t *testing.T, body string) string {
	t.Helper()
	var b strings.Builder
	_, err := io.Copy(&b, quotedprintable.NewReader(strings.NewReader(body)))
	require.NoError(t, err)
	return b.String()
}

func emailNotifier(mb *notifytest.Mailbox, clk *clock, opts notify.Options) *notify.Notifier {
	return notify.New(notify.Deps{Channels: []notify.Channel{{ID: "config:oncall", Name: "oncall", Type: "email",
		To: []string{"oncall@example.com", "lead@example.com"}}}, SMTP: smtpConfig(mb), Now: clk.Now}, opts)
}

func TestEmailNoticeArrivesOverSTARTTLS(t *testing.T) {
	t.Parallel()
	mb := newMailbox(t)
	clk := newClock()
	n := emailNotifier(mb, clk, notify.Options{})
	ctx := context.Background()
	n.Notify(ctx, notify.Notice{Kind: notify.EndpointDisabled, EndpointID: "ep-1",
		Title: "Endpoint billing-api: disabled", Text: "Its circuit stayed open for 3 days.\nRe-enable it with POST /endpoints/ep-1/enable."})
	n.RunOnce(ctx)

	got := mb.Received()
	require.Len(t, got, 1)
	m := got[0]
	require.True(t, m.TLS, "STARTTLS was used")
	require.Equal(t, "qhronos@example.com", m.From)
	require.Equal(t, []string{"oncall@example.com", "lead@example.com"}, m.To)
	require.Equal(t, "[Qhronos] Endpoint billing-api: disabled", m.Subject)
	require.Equal(t, "endpoint_disabled", m.Header.Get("X-Qhronos-Notice"))
	require.Equal(t, "text/plain; charset=utf-8", m.Header.Get("Content-Type"))
	body := decodeQP(t, m.Body)
	require.Contains(t, body, "Its circuit stayed open for 3 days.\r\nRe-enable it with POST /endpoints/ep-1/enable.")
}

func TestEmailDigestGroupsFailures(t *testing.T) {
	t.Parallel()
	mb := newMailbox(t)
	clk := newClock()
	n := emailNotifier(mb, clk, notify.Options{DigestInterval: time.Minute})
	ctx := context.Background()
	for i := range 23 {
		n.Notify(ctx, failed(i))
	}
	n.RunOnce(ctx)
	require.Empty(t, mb.Received(), "failures wait for the digest")
	clk.Advance(time.Minute)
	n.RunOnce(ctx)

	got := mb.Received()
	require.Len(t, got, 1, "23 failures, one mail")
	require.Equal(t, "[Qhronos] 23 deliveries failed after their last retry", got[0].Subject)
	body := decodeQP(t, got[0].Body)
	require.Equal(t, 20, strings.Count(body, "\r\n- event billing"), "20 failures listed")
	require.Contains(t, body, "HTTP 500")
	require.Contains(t, body, "… and 3 more")
}

func TestEmailRefusesPlainTextWhenSTARTTLSIsRequired(t *testing.T) {
	t.Parallel()
	// A server without TLS: go-smtp does not offer STARTTLS.
	mb := notifytest.NewMailbox(t, notifytest.Options{})

	obs := &counts{}
	n := notify.New(notify.Deps{SMTP: notify.SMTP{Addr: mb.Addr, From: "q@example.com", TLS: "starttls"},
		Observer: obs}, notify.Options{})
	err := n.SendTest(context.Background(), notify.Channel{Name: "x", Type: "email", To: []string{"a@example.com"}}, "test")
	require.ErrorContains(t, err, "STARTTLS")
	require.Equal(t, 1, obs.get("email/test/failed"))
	require.Empty(t, mb.Received())
}
