package actions_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/outbound"
)

func TestOutcomeClassification(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var redirectTargetHits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { redirectTargetHits.Add(1) }))
	t.Cleanup(target.Close)

	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang":
			hold(w, r, release)
			return
		case "/429":
			w.Header().Set("Retry-After", "120")
		case "/503":
			w.Header().Set("Retry-After", clock.Add(2*time.Minute).Format(http.TimeFormat))
		case "/301":
			w.Header().Set("Location", target.URL+"/moved")
		}
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.WriteHeader(code)
		w.Write([]byte("answer " + r.URL.Path))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refusedURL := "http://" + closed.Addr().String() + "/"
	closed.Close()

	cfg := testConfig(t, func(c *actions.HTTPConfig) { c.Now = func() time.Time { return clock } })
	wh := actions.NewWebhook(cfg)

	tests := []struct {
		name           string
		url            string
		wantOK         bool
		wantStatus     int
		wantRetryable  bool
		wantGone       bool
		wantRetryAfter time.Duration
		wantErr        string
	}{
		{"200", srv.URL + "/200", true, 200, false, false, 0, ""},
		{"204", srv.URL + "/204", true, 204, false, false, 0, ""},
		{"301 not followed", srv.URL + "/301", false, 301, true, false, 0, "redirects are not followed"},
		{"400", srv.URL + "/400", false, 400, false, false, 0, "400"},
		{"404", srv.URL + "/404", false, 404, false, false, 0, "404"},
		{"408", srv.URL + "/408", false, 408, true, false, 0, "408"},
		{"410 gone", srv.URL + "/410", false, 410, false, true, 0, "gone"},
		{"429 with Retry-After seconds", srv.URL + "/429", false, 429, true, false, 2 * time.Minute, "429"},
		{"500", srv.URL + "/500", false, 500, true, false, 0, "500"},
		{"503 with Retry-After date", srv.URL + "/503", false, 503, true, false, 2 * time.Minute, "503"},
		{"refused connection", refusedURL, false, 0, true, false, 0, "refused"},
		{"timeout", srv.URL + "/hang", false, 0, true, false, 0, "timed out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := baseRequest()
			// Only the hanging receiver needs a short deadline; the others
			// get a long one, or a loaded machine turns a 200 into a timeout
			// (seen about once in 50 runs under the race detector).
			req.Timeout = 10 * time.Second
			if tc.url == srv.URL+"/hang" {
				req.Timeout = 300 * time.Millisecond
			}
			out := prepare(t, wh, map[string]string{"url": tc.url}).Execute(context.Background(), req)
			if out.OK() != tc.wantOK {
				t.Fatalf("OK = %v (err %v), want %v", out.OK(), out.Err, tc.wantOK)
			}
			if out.StatusCode != tc.wantStatus {
				t.Errorf("StatusCode = %d, want %d", out.StatusCode, tc.wantStatus)
			}
			if !tc.wantOK {
				if out.Retryable != tc.wantRetryable {
					t.Errorf("Retryable = %v, want %v (err %v)", out.Retryable, tc.wantRetryable, out.Err)
				}
				if !strings.Contains(out.Err.Error(), tc.wantErr) {
					t.Errorf("Err = %q, want it to mention %q", out.Err, tc.wantErr)
				}
			}
			if out.Gone != tc.wantGone {
				t.Errorf("Gone = %v, want %v", out.Gone, tc.wantGone)
			}
			if out.RetryAfter != tc.wantRetryAfter {
				t.Errorf("RetryAfter = %s, want %s", out.RetryAfter, tc.wantRetryAfter)
			}
			if tc.wantStatus != 0 && out.Excerpt != "answer /"+strconv.Itoa(tc.wantStatus) && tc.wantStatus != 204 {
				t.Errorf("Excerpt = %q, want the response body", out.Excerpt)
			}
		})
	}
	t.Cleanup(func() {
		if got := redirectTargetHits.Load(); got != 0 {
			t.Errorf("redirect target reached %d times, want 0", got)
		}
	})
}

func TestBlockedAtDialIsPermanent(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	// A public-looking name passes validation; DNS then answers loopback,
	// which this configuration does not allow.
	wh := actions.NewWebhook(testConfig(t, func(c *actions.HTTPConfig) {
		c.Outbound = outbound.Options{Resolver: fixedResolver{netip.MustParseAddr("127.0.0.1")}}
	}))
	d := prepare(t, wh, map[string]string{"url": "http://hooks.example.com:" + port + "/"})
	out := d.Execute(context.Background(), baseRequest())

	require.Error(t, out.Err)
	var blocked *outbound.BlockedError
	if !errors.As(out.Err, &blocked) {
		t.Errorf("Err = %v, want it to wrap *outbound.BlockedError", out.Err)
	}
	if out.Retryable {
		t.Errorf("Retryable = true, want false for a blocked destination")
	}
	if strings.Contains(out.Err.Error(), "hooks.example.com") {
		t.Errorf("Err = %q repeats the URL; it may carry credentials", out.Err)
	}
	select {
	case r := <-got:
		t.Fatalf("receiver reached: %s %s", r.Method, r.Path)
	default:
	}
}

type fixedResolver []netip.Addr

func (f fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return f, nil
}

func TestRedirectToLoopbackIsRecordedNotFollowed(t *testing.T) {
	t.Parallel()
	var loopHits atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { loopHits.Add(1) }))
	t.Cleanup(internal.Close)
	redirector := httptest.NewServer(http.RedirectHandler(internal.URL+"/admin", http.StatusTemporaryRedirect))
	t.Cleanup(redirector.Close)

	out := prepare(t, actions.NewWebhook(testConfig(t, nil)), map[string]string{"url": redirector.URL}).Execute(context.Background(), baseRequest())
	if out.OK() || out.StatusCode != http.StatusTemporaryRedirect || !out.Retryable {
		t.Errorf("outcome = {status %d, err %v, retryable %v}, want failed 307, retryable", out.StatusCode, out.Err, out.Retryable)
	}
	if got := loopHits.Load(); got != 0 {
		t.Errorf("loopback target reached %d times, want 0", got)
	}
}

func TestTLSErrorIsRetryable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	// The client does not trust the test CA.
	out := prepare(t, actions.NewWebhook(testConfig(t, nil)), map[string]string{"url": srv.URL}).Execute(context.Background(), baseRequest())
	if out.OK() || !out.Retryable || out.StatusCode != 0 {
		t.Errorf("outcome = {status %d, err %v, retryable %v}, want a retryable failure without status", out.StatusCode, out.Err, out.Retryable)
	}
	if !strings.Contains(out.Err.Error(), "certificate") {
		t.Errorf("Err = %q, want it to mention the certificate", out.Err)
	}
}

func TestTrustedTLSReceiverSucceeds(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	cfg := testConfig(t, func(c *actions.HTTPConfig) {
		c.Outbound.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	})
	out := prepare(t, actions.NewWebhook(cfg), map[string]string{"url": srv.URL}).Execute(context.Background(), baseRequest())
	require.NoError(t, out.Err)
}

func TestBlockedOutcomeFromDialGuard(t *testing.T) {
	t.Parallel()
	// A URL that passes create-time validation in one configuration and is
	// refused at dial by the running one (e.g. allow_cidrs narrowed since).
	srv, got := recorder(t, http.StatusOK)
	permissive := actions.NewWebhook(testConfig(t, nil))
	strict := actions.NewWebhook(testConfig(t, func(c *actions.HTTPConfig) { c.Outbound.AllowCIDRs = nil }))
	p := params(t, map[string]string{"url": srv.URL})
	_, err := permissive.Prepare(p)
	require.NoError(t, err)

	// The running policy prepares the stored params before any attempt (the
	// dispatcher fails such an attempt for good).
	d, err := strict.Prepare(p)
	require.Error(t, err)
	if d != nil {
		t.Errorf("Prepare returned a delivery with its error")
	}
	if !strings.Contains(err.Error(), "blocked") || !strings.Contains(err.Error(), "outbound.allow_cidrs") {
		t.Errorf("err = %q, want it to say blocked and name outbound.allow_cidrs", err)
	}
	select {
	case r := <-got:
		t.Fatalf("receiver reached: %s", r.Method)
	default:
	}
	var pe *actions.ParamError
	if !errors.As(err, &pe) || pe.Param != "url" {
		t.Errorf("err = %v, want a ParamError on url (prepared with the running policy)", err)
	}
}
