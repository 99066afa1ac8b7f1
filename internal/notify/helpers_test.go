package notify_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/notify"
	"github.com/qhronos/qhronos/internal/outbound"
)

var t0 = time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// received is one webhook notice as the receiver got it.
type received struct {
	ID      string
	Header  http.Header
	Body    []byte
	Payload struct {
		Type      string          `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
}

// receiver is a real HTTP receiver on loopback that verifies every
// request's Standard Webhooks signature with the official library.
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	secret string
	mu     sync.Mutex
	got    []received
	// fail answers 503 to the first fail requests.
	fail int
}

func newReceiver(t testing.TB, secret string) *receiver {
	r := &receiver{t: t, secret: secret}
	verifier, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if err := verifier.Verify(body, req.Header); err != nil {
			t.Errorf("signature does not verify: %v", err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rec := received{ID: req.Header.Get("webhook-id"), Header: req.Header.Clone(), Body: body}
		if err := json.Unmarshal(body, &rec.Payload); err != nil {
			t.Errorf("payload: %v", err)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, rec)
		if r.fail > 0 {
			r.fail--
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// loopbackClient is the outbound-guarded client with loopback allowed, as
// the embedded server has it.
func loopbackClient() *http.Client {
	return outbound.NewClient(outbound.Options{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
}

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// counts records ObserveNotice.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) ObserveNotice(channelType, kind, outcome string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[channelType+"/"+kind+"/"+outcome]++
}

func (c *counts) get(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// webhookNotifier is a notifier with one webhook channel to r.
func webhookNotifier(t testing.TB, r *receiver, clk *clock, opts notify.Options, kinds ...notify.Kind) (*notify.Notifier, *counts) {
	t.Helper()
	obs := &counts{}
	n := notify.New(notify.Deps{Channels: []notify.Channel{{ID: "config:ops", Name: "ops", Type: "webhook",
		URL: r.srv.URL + "/hook", Secret: testSecret, Kinds: kinds}}, HTTP: loopbackClient(), Now: clk.Now,
		Observer: obs}, opts)
	return n, obs
}
