package actions_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/actions/brokertest"
	"github.com/qhronos/qhronos/internal/outbound"
)

// TestMain fails the run if any attempt left a goroutine behind (hanging,
// trickling and endless receivers included). The RabbitMQ node the broker
// tests share is stopped first: its process watcher is not a leak.
func TestMain(m *testing.M) {
	code := m.Run()
	brokertest.StopRabbitMQ()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// loopbackOutbound re-opens loopback the way an operator would with
// outbound.allow_cidrs, so tests can use httptest receivers.
var loopbackOutbound = outbound.Options{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

// testConfig returns an HTTPConfig whose client is closed with the test.
func testConfig(t *testing.T, mod func(*actions.HTTPConfig)) actions.HTTPConfig {
	t.Helper()
	cfg := actions.HTTPConfig{Outbound: loopbackOutbound, Version: "1.2.3"}
	if mod != nil {
		mod(&cfg)
	}
	if cfg.Client == nil {
		cfg.Client = outbound.NewClient(cfg.Outbound)
	}
	t.Cleanup(cfg.Client.CloseIdleConnections)
	return cfg
}

// received is what a receiver saw.
type received struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// recorder is a loopback receiver that records each request and answers
// with status.
func recorder(t *testing.T, status int) (*httptest.Server, <-chan received) {
	t.Helper()
	ch := make(chan received, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ch <- received{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

func next(t *testing.T, ch <-chan received) received {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("receiver got no request")
		return received{}
	}
}

func params(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// prepare returns a's delivery for params (marshalled), which must be valid.
func prepare(t *testing.T, a actions.Action, p any) actions.Delivery {
	t.Helper()
	d, err := a.Prepare(params(t, p))
	require.NoError(t, err)
	return d
}

func baseRequest() actions.Request {
	return actions.Request{
		EventID:      "0b0d1f34-9a43-4c2e-9a1b-000000000001",
		OccurrenceID: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
		Attempt:      1,
		ScheduledAt:  time.Date(2026, 3, 1, 9, 0, 0, 0, time.FixedZone("CET", 3600)),
		DispatchedAt: time.Date(2026, 3, 1, 8, 0, 0, 250_000_000, time.UTC),
		Name:         "daily report",
		Description:  "sends <the> report & more",
		Tags:         []string{"billing"},
		Metadata:     json.RawMessage(`{"customer": "acme", "n": 1}`),
		Secrets:      []string{"qhronos-test-secret"},
		Timeout:      5 * time.Second,
	}
}

// hold keeps a request open like a hung receiver. It reads the body first so
// the server notices when the client gives up, and returns at the latest
// when the test releases it, so closing the server never blocks.
func hold(_ http.ResponseWriter, r *http.Request, release <-chan struct{}) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-release:
	}
}
