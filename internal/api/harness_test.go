package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/endpoints"
	"github.com/qhronos/qhronos/internal/hub"
	"github.com/qhronos/qhronos/internal/lifecycle"
	"github.com/qhronos/qhronos/internal/metrics"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/notify"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler"
	"github.com/qhronos/qhronos/internal/secrets"
)

const (
	testMaster    = "test-master-token-0123456789abcdef0123456789"
	testJWTSecret = "test-jwt-secret-0123456789abcdef0123456789abcdef"
	testBoxKey    = "test-encryption-key-0123456789abcdef0123456789"
)

// env is a real server (real store, auth, scheduler and actions) behind an
// httptest listener on loopback.
type env struct {
	t      testing.TB
	store  *repository.Store
	srv    *Server
	http   *httptest.Server
	sched  *scheduler.Service
	coord  coordination.Coordinator
	hub    *hub.Hub
	authn  *auth.Authenticator
	keys   auth.Keyring
	master string
	// replanner re-plans events after calendar edits; not started.
	replanner *lifecycle.Replanner
	// skipOpenAPI turns off the check of every answer against openapi.json
	// (see checkOpenAPI); only for tests that probe non-API behaviour.
	skipOpenAPI bool
}

// envConfig is what options may change before the env is built.
type envConfig struct {
	coord      coordination.Coordinator
	instanceID string
	opts       Options
	signNow    func() time.Time
}

type envOption func(*envConfig)

func withOptions(f func(*Options)) envOption { return func(c *envConfig) { f(&c.opts) } }

// withCoordinator shares a coordinator (e.g. Redis) between envs acting as
// separate instances.
func withCoordinator(c coordination.Coordinator, instanceID string) envOption {
	return func(cfg *envConfig) { cfg.coord, cfg.instanceID = c, instanceID }
}

// withSigningClock sets the clock that decides whether a rotation's grace
// period has ended when deliveries are signed (default time.Now).
func withSigningClock(now func() time.Time) envOption {
	return func(c *envConfig) { c.signNow = now }
}

// testDefaultSecret is the env's hmac.default_secret.
const testDefaultSecret = "default-secret"

// newEnv builds the server on the given backend. The scheduler is built but
// not started: tests that need deliveries call e.sched.Start.
func newEnv(t testing.TB, open func(testing.TB) *repository.Store, opts ...envOption) *env {
	t.Helper()
	store := open(t)
	log := zap.NewNop()
	apiOpts := OptionsFrom(config.Default())
	apiOpts.RateLimit = coordination.Limit{Rate: 1000, Burst: 1000}
	cfg := envConfig{instanceID: "test-instance", opts: apiOpts, signNow: time.Now}
	for _, opt := range opts {
		opt(&cfg)
	}
	coord := cfg.coord
	if coord == nil {
		coord = coordination.NewLocal(time.Now)
		t.Cleanup(func() { _ = coord.Close() })
	}
	box, err := secrets.NewBox(testBoxKey)
	require.NoError(t, err)
	keys := auth.NewKeyring([]byte(testJWTSecret))
	authn := auth.NewAuthenticator(auth.Config{MasterToken: testMaster, Keys: keys}, store, time.Now)
	h := hub.New(coord, cfg.instanceID, log)
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	httpCfg := actions.HTTPConfig{Outbound: outbound.Options{AllowCIDRs: loopback}, Version: "test"}
	registry := actions.NewRegistry()
	for _, a := range []actions.Action{actions.NewWebhook(httpCfg), actions.NewAPICall(httpCfg),
		actions.NewWebSocket(h, 30*time.Second)} {
		require.NoError(t, registry.Register(a))
	}
	schedCfg := scheduler.ConfigFrom(config.Default(), cfg.instanceID)
	calendars := calendar.NewCache(schedCfg.Recurrence, 0)
	schedCfg.Exclusive, schedCfg.LogDeliveries = false, false
	schedCfg.MaxSleep, schedCfg.DrainTimeout = 50*time.Millisecond, 5*time.Second
	// The API's listener exists first: callback deliveries link their runs
	// under its address.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	schedCfg.APIBaseURL, schedCfg.RunToken = "http://"+ln.Addr().String(), keys.RunToken
	schedCfg.RescueInterval = time.Second // runs past max_runtime time out promptly
	sched := scheduler.New(schedCfg, scheduler.ServiceDeps{
		Store: store, Registry: registry, Wakeups: coordination.NewWakeups(coord, log), Logger: log,
		Calendars: calendars,
		Observers: []scheduler.AttemptObserver{h},
		// As qhronosd's secretsResolver does.
		Secrets: func(ev *model.Event) ([]string, error) {
			return box.SigningSecrets(secrets.Sealed{Current: ev.HMACSecret, Previous: ev.PreviousSecret,
				PreviousUntil: ev.PreviousSecretExpires}, testDefaultSecret, cfg.signNow())
		},
	})
	t.Cleanup(sched.Stop)
	service := lifecycle.New(lifecycle.Deps{Store: store, Actions: registry, Secrets: box, Waker: sched,
		Calendars: calendars},
		lifecycle.Options{Recurrence: cfg.opts.Recurrence, Window: sched.Window(), MaxTimeout: 60 * time.Second,
			Outbound: httpCfg.Outbound})
	// Tests run the calendar re-planner themselves (e.replanner.RunOnce).
	replanner := lifecycle.NewReplanner(service, lifecycle.ReplannerConfig{}, lifecycle.ReplannerDeps{Logger: log})
	d := Deps{Store: store, Events: service, Auth: authn, Actions: registry, Coord: coord, Status: sched,
		Replans: replanner,
		Secrets: box, Hub: h, Logger: log, Now: time.Now,
		Metrics: metrics.New(metrics.Options{WebSocketConnections: h.Connections,
			Queue: func(ctx context.Context) (int, int, error) { return store.QueueDepth(ctx, time.Now()) }}),
		Info: Info{Database: string(store.Backend()), Version: "test", InstanceID: cfg.instanceID, StartedAt: time.Now()}}
	loopbackOut := outbound.Options{AllowCIDRs: loopback}
	d.Notifications = notify.NewAdmin(store, box, loopbackOut, notify.New(notify.Deps{Store: store, Box: box, Recorder: store,
		HTTP: outbound.NewClient(loopbackOut), Logger: log}, notify.Options{}), time.Now)
	// The endpoint runtime sends test deliveries; attempts in these tests
	// go without one (the scheduler's Endpoints is nil).
	d.EndpointTests = endpoints.New(endpoints.Config{Store: store, Box: box, Outbound: httpCfg.Outbound,
		Limits: coord, Clock: scheduler.SystemClock{}, Logger: log,
		Load: func(ctx context.Context, id string) (*model.Endpoint, error) {
			ep, err := store.GetEndpoint(ctx, id)
			if err != nil {
				return nil, err
			}
			return &ep, nil
		}})
	srv := New(d, cfg.opts)
	ts := httptest.NewUnstartedServer(srv.Handler())
	_ = ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	require.NoError(t, h.Start(ctx))
	t.Cleanup(h.Stop)
	watcher := hub.NewSessionWatcher(h, store, time.Now, 50*time.Millisecond)
	require.NoError(t, watcher.Start(ctx))
	t.Cleanup(watcher.Stop)
	select {
	case <-h.Ready():
	case <-time.After(60 * time.Second):
		t.Fatal("websocket hub did not subscribe within 10s")
	}
	return &env{t: t, store: store, srv: srv, http: ts, sched: sched, coord: coord, hub: h, authn: authn,
		keys: keys, master: testMaster, replanner: replanner}
}

// response is a decoded answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "body: %s", r.Body)
}

func (r response) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.json(t, &m)
	return m
}

// do sends a request; body may be nil, a string (sent raw) or a value
// (sent as JSON). Extra headers come in name, value pairs.
func (e *env) do(method, path, token string, body any, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		require.NoError(e.t, err)
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, e.http.URL+path, rd)
	require.NoError(e.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.http.Client().Do(req)
	require.NoError(e.t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(e.t, err)
	out := response{Status: res.StatusCode, Header: res.Header, Body: b}
	e.checkOpenAPI(req, out)
	return out
}

// mint issues a JWT through the API with the master token.
func (e *env) mint(access string, scope []string) string {
	e.t.Helper()
	res := e.do("POST", "/tokens", e.master, map[string]any{"type": "jwt", "sub": "user-" + access,
		"access": access, "scope": scope, "expires_at": time.Now().Add(time.Hour).Format(time.RFC3339)})
	require.Equal(e.t, http.StatusOK, res.Status, "mint: %s", res.Body)
	var tok struct {
		Token string `json:"token"`
	}
	res.json(e.t, &tok)
	return tok.Token
}

// createEvent posts an event and returns its decoded answer.
func (e *env) createEvent(token string, body map[string]any) map[string]any {
	e.t.Helper()
	res := e.do("POST", "/events", token, body)
	require.Equal(e.t, http.StatusCreated, res.Status, "create: %s", res.Body)
	return res.object(e.t)
}

// eventBody is a valid one-time webhook event an hour from now.
func eventBody(tags ...string) map[string]any {
	if tags == nil {
		tags = []string{}
	}
	return map[string]any{
		"name": "report", "start_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"webhook": "http://127.0.0.1:9999/hook", "tags": tags,
	}
}

func backends() []repositorytest.Backend { return repositorytest.Backends() }
