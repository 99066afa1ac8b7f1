package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/api"
	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/console"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/endpoints"
	"github.com/qhronos/qhronos/internal/hub"
	"github.com/qhronos/qhronos/internal/lifecycle"
	"github.com/qhronos/qhronos/internal/metrics"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/scheduler"
	"github.com/qhronos/qhronos/internal/secrets"
	"github.com/qhronos/qhronos/internal/startstop"
	"github.com/qhronos/qhronos/internal/tracing"
)

// serve runs the server until ctx ends, then shuts down in order: stop
// taking requests, drain the dispatcher, close the pools.
func serve(ctx context.Context, args []string, stderr io.Writer) error {
	b, err := boot(ctx, args, stderr)
	if err != nil {
		return err
	}
	defer b.close()
	cfg, log := b.cfg, b.log
	stopPprof, err := startPprof(log)
	if err != nil {
		return err
	}
	defer stopPprof()
	traces, err := tracing.Setup(ctx, version)
	if err != nil {
		return err
	}
	defer func() {
		// Last out (after the drain): the final attempts' spans are flushed.
		fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := traces.Shutdown(fctx); err != nil {
			log.Warn("flush traces", zap.Error(err))
		}
	}()
	if traces != nil {
		log.Info("tracing on: exporting spans over OTLP")
	}
	if _, err := b.store.Migrate(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}

	instanceID := newInstanceID()
	coord, err := openCoordinator(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer func() { _ = coord.Close() }()

	box, err := secrets.NewBox(cfg.Secrets.EncryptionKey)
	if err != nil {
		return fmt.Errorf("secrets.encryption_key: %w", err)
	}
	keys := auth.NewKeyring([]byte(cfg.Auth.JWTSecret), bytesList(cfg.Auth.JWTPreviousSecrets)...)
	if err := keys.Validate(); err != nil {
		return fmt.Errorf("auth.jwt_secret: %w", err)
	}
	authn := auth.NewAuthenticator(auth.Config{MasterToken: cfg.Auth.MasterToken, Keys: keys,
		Issuer: cfg.Auth.Issuer, Audience: cfg.Auth.Audience, MaxTTL: cfg.Auth.TokenMaxTTL}, b.store, time.Now)

	ln, err := net.Listen("tcp", cfg.Server.Addr)
	if err != nil {
		return fmt.Errorf("server.addr: %w", err)
	}
	loopbackOnly := cfg.OutboundLoopbackAllowed()
	out := outbound.Options{AllowCIDRs: cfg.Outbound.AllowCIDRs, AllowLoopback: loopbackOnly,
		MaxIdleConnsPerHost: max(cfg.Outbound.MaxPerHost, 4), Reserved: coordinationRedis(cfg)}
	httpCfg := actions.HTTPConfig{Outbound: out, ExcerptLimit: int(cfg.Outbound.ResponseExcerptBytes),
		Version: version, Redactor: box.Redactor(), OmitRequests: !cfg.Outbound.RecordRequests}
	wsHub := hub.New(coord, instanceID, log)
	registry := actions.NewRegistry()
	// Broker connections are shared by every broker action and closed on
	// return, after stopAll drained the dispatcher.
	brokerPool := actions.NewBrokerPool(actions.DefaultBrokerIdle)
	defer brokerPool.Close()
	brokerCfg := actions.BrokerConfig{Outbound: out, Pool: brokerPool, Redactor: httpCfg.Redactor,
		OmitRequests: httpCfg.OmitRequests}
	for _, a := range []actions.Action{actions.NewWebhook(httpCfg), actions.NewAPICall(httpCfg),
		actions.NewWebSocket(wsHub, cfg.WebSocket.AckTimeout), actions.NewNATS(brokerCfg), actions.NewAMQP(brokerCfg),
		actions.NewKafka(brokerCfg), actions.NewRedisStream(brokerCfg)} {
		if err := registry.Register(a); err != nil {
			return err
		}
	}

	clock := deploymentClock(ctx, b.store, log)
	m := metrics.New(metrics.Options{WebSocketConnections: wsHub.Connections, DroppedFrames: wsHub.DroppedFrames,
		EndpointIDs: cfg.Metrics.EndpointIDs, ActionTypes: registry.Types(),
		Queue: func(ctx context.Context) (int, int, error) { return b.store.QueueDepth(ctx, clock.Now()) }})
	// Operator notifications; notices.notifier is what services report to.
	notices, err := newNotifications(cfg, b.store, coord, box, out, m, clock.Now, instanceID, log)
	if err != nil {
		return err
	}
	schedCfg := scheduler.ConfigFrom(cfg, instanceID)
	schedCfg.RunToken = keys.RunToken
	cc := cfg.Endpoints.Circuit
	endpointRuntime := endpoints.New(endpoints.Config{Store: b.store, Load: loadEndpoint(b.store), Box: box,
		Outbound: out, Limits: coord, Clock: clock, Logger: log, Observer: m,
		Notifier: endpoints.Notices{Notifier: notices.notifier},
		Circuit: model.Circuit{Failures: cc.Failures, FailureRatio: cc.FailureRatio, MinRequests: cc.MinRequests,
			Window: cc.Window, CoolDown: cc.CoolDown, DisableAfter: cc.DisableAfter}})
	// One cache of compiled exclusion calendars for every planner.
	calendars := calendar.NewCache(schedCfg.Recurrence, calendar.DefaultCacheSize)
	sched := scheduler.New(schedCfg, scheduler.ServiceDeps{
		Store: b.store, Registry: registry, Clock: clock, Locker: coord, Calendars: calendars,
		Wakeups: coordination.NewWakeups(coord, log),
		Secrets: secrets.NewResolver(box, cfg.HMAC.DefaultSecret, clock.Now).Resolve,
		Logger:  log, Observer: m, Observers: []scheduler.AttemptObserver{m, wsHub}, Endpoints: endpointRuntime,
	})

	// The service plans an event's first rows with the expander's window.
	service := lifecycle.New(lifecycle.Deps{Store: b.store, Actions: registry, Secrets: box, Waker: sched,
		Calendars: calendars, Now: clock.Now}, lifecycle.Options{Recurrence: schedCfg.Recurrence,
		Window: schedCfg.Window(), MaxTimeout: cfg.Actions.MaxAttemptTimeout, Outbound: out})
	replanner := lifecycle.NewReplanner(service, lifecycle.ReplannerConfig{},
		lifecycle.ReplannerDeps{Locker: coord, Owner: instanceID, Logger: log})
	registerHealthMetrics(m, b.store, coord, sched, replanner)
	var ui *console.Console
	srv := api.New(api.Deps{
		Store: b.store, Events: service, Auth: authn, Actions: registry, Coord: coord, Notifications: notices.admin,
		EndpointTests: endpointRuntime,
		Status:        sched, Replans: replanner, Secrets: box, Hub: wsHub, Metrics: m, Logger: log, Now: clock.Now,
		Info: api.Info{Database: string(b.store.Backend()), Version: version, InstanceID: instanceID, StartedAt: time.Now()},
		Extra: func(r *gin.Engine) {
			r.Any(console.Prefix+"/*page", func(c *gin.Context) { ui.ServeHTTP(c.Writer, c.Request) })
			r.Any(console.PortalPrefix+"/*page", func(c *gin.Context) { ui.ServeHTTP(c.Writer, c.Request) })
		},
	}, api.OptionsFrom(cfg))
	if ui, err = console.New(console.Options{API: srv.Handler(), EncryptionKey: cfg.Secrets.EncryptionKey,
		SecureCookie: cfg.Console.SecureCookie, TrustedProxies: cfg.Server.TrustedProxies, Revocations: b.store,
		RequestsOff: !cfg.Outbound.RecordRequests, FrameAncestors: cfg.Console.Portal.FrameAncestors,
		Logger: log}); err != nil {
		return fmt.Errorf("console: %w", err)
	}
	defer ui.Close()
	httpSrv := srv.HTTPServer(cfg.Server.Addr)

	// The services run on a context of their own: the shutdown below stops
	// them in order once the HTTP server has stopped taking requests.
	sessions := hub.NewSessionWatcher(wsHub, b.store, time.Now, hub.SessionCheckInterval)
	resumer := lifecycle.NewResumer(service, coord, instanceID, time.Second, log)
	// The notifier starts first and stops last, so notices raised while the
	// others drain still go out; the endpoint runtime stops after the
	// scheduler, folding in the last attempts' outcomes.
	services := []startstop.Service{notices.notifier, wsHub, sessions, endpointRuntime, sched, resumer, replanner,
		notices.scanner, notices.watcher}
	for i, svc := range services {
		if err := svc.Start(context.Background()); err != nil {
			stopAll(services[:i])
			return err
		}
	}
	served := make(chan error, 1)
	go func() { served <- httpSrv.Serve(ln) }()

	url := "http://" + ln.Addr().String()
	log.Info("qhronosd started", zap.String("version", version), zap.String("addr", url),
		zap.String("instance_id", instanceID), zap.String("database", string(b.store.Backend())),
		zap.String("coordination", coord.Name()), zap.Bool("outbound_loopback_allowed", outbound.LoopbackAllowed(out)))
	if !cfg.Production() {
		printBanner(stderr, b, url, loopbackOnly)
	}

	select {
	case <-ctx.Done():
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			stopAll(services)
			return fmt.Errorf("serve http: %w", err)
		}
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
	defer cancel()
	if err := httpSrv.Shutdown(shutdownCtx); err != nil {
		log.Warn("http shutdown", zap.Error(err))
	}
	stopAll(services)
	log.Info("stopped")
	return nil
}

// registerHealthMetrics exports what /status reports — dependencies up,
// loops healthy, waiting occurrences by status, open circuits — for the
// dashboard and alert rules in deploy/.
func registerHealthMetrics(m *metrics.Metrics, store *repository.Store, coord coordination.Coordinator,
	sched *scheduler.Service, replanner interface{ Status() map[string]any }) {
	opts := metrics.HealthOptions{
		Database: store.Ping,
		Loops: func() map[string]any {
			loops := sched.Status()
			loops["replanner"] = replanner.Status()
			return loops
		},
		Waiting: func(ctx context.Context) (map[string]int, error) {
			counts, err := store.CountWaiting(ctx)
			if err != nil {
				return nil, err
			}
			// Every waiting status, zeros included, so a series never vanishes.
			out := map[string]int{}
			for _, st := range []model.OccurrenceStatus{model.OccurrencePending, model.OccurrenceDispatching,
				model.OccurrenceRetrying, model.OccurrenceAwaitingAck, model.OccurrenceRunning} {
				out[string(st)] = counts[st]
			}
			return out, nil
		},
		OpenCircuits: func(ctx context.Context) (int, error) {
			ids, err := store.OpenCircuits(ctx, 10000)
			return len(ids), err
		},
	}
	opts.Workers = func() metrics.Workers {
		st := sched.Dispatcher.Shares()
		w := metrics.Workers{Busy: st.Busy, LargestScope: st.LargestScope, StuckDestinations: st.Stuck(),
			OldestAttempt: st.OldestAttempt, ByDestination: map[string]int{}}
		for _, d := range st.Destinations {
			w.ByDestination[d.Destination] = d.Workers
		}
		return w
	}
	if coord.Name() != "in-process" { // as /ready: in-process coordination has no Redis to lose
		opts.Redis = coord.Ping
	}
	m.RegisterHealth(opts)
}

// loadEndpoint reads an endpoint for delivery: unscoped, with its health.
func loadEndpoint(store *repository.Store) func(ctx context.Context, id string) (*model.Endpoint, error) {
	return func(ctx context.Context, id string) (*model.Endpoint, error) {
		ep, err := store.GetEndpoint(ctx, id)
		if err != nil {
			return nil, err
		}
		return &ep, nil
	}
}

func openCoordinator(ctx context.Context, cfg *config.Config, log *zap.Logger) (coordination.Coordinator, error) {
	rc := coordination.RedisConfig{URL: cfg.Redis.URL,
		Sentinel: coordination.SentinelConfig{MasterName: cfg.Redis.Sentinel.Master, Addrs: cfg.Redis.Sentinel.Addrs,
			Password: cfg.Redis.Password},
		Cluster: coordination.ClusterConfig{Addrs: cfg.Redis.Cluster.Addrs, Password: cfg.Redis.Password}}
	if !rc.Enabled() {
		return coordination.NewLocal(time.Now), nil
	}
	coordination.SetRedisLogger(log)
	return coordination.Open(ctx, rc, cfg.Redis.Prefix, log)
}

// coordinationRedis is the coordination Redis as destinations must not
// reach it (nil with in-process coordination): every address the
// configuration names, whatever the topology uses.
func coordinationRedis(cfg *config.Config) *outbound.Reserved {
	addrs := append(append([]string{}, cfg.Redis.Sentinel.Addrs...), cfg.Redis.Cluster.Addrs...)
	if u, err := url.Parse(cfg.Redis.URL); err == nil && u.Host != "" {
		host := u.Host
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), "6379")
		}
		addrs = append(addrs, host)
	}
	if len(addrs) == 0 {
		return nil
	}
	return &outbound.Reserved{Addrs: addrs, KeyPrefix: cfg.Redis.Prefix, Allowed: cfg.Outbound.AllowCoordinationRedis}
}

// deploymentClock is the clock every due decision uses: the database's.
func deploymentClock(ctx context.Context, store *repository.Store, log *zap.Logger) scheduler.Clock {
	if store.Backend() != repository.Postgres {
		return scheduler.SystemClock{}
	}
	c := scheduler.NewDBClock(store, log, time.Minute)
	if err := c.Sync(ctx); err != nil {
		log.Warn("measure database clock offset", zap.Error(err))
	}
	_ = c.Start(ctx) // stops with ctx
	return c
}

// stopAll stops services in reverse order of start: the scheduler drains
// (the websocket action still needs the hub) before the hub stops.
func stopAll(services []startstop.Service) {
	for i := len(services) - 1; i >= 0; i-- {
		services[i].Stop()
	}
}

func printBanner(w io.Writer, b *booted, url string, loopbackOnly bool) {
	_, _ = fmt.Fprintf(w, "\nQhronos %s is running at %s (embedded SQLite in %s)\n", version, url, b.cfg.Server.DataDir)
	_, _ = fmt.Fprintf(w, "Web console: %s%s/ (sign in with the master token)\n", url, console.Prefix)
	switch {
	case b.cfg.Auth.MasterToken != b.secrets.MasterToken:
		// A token set in config or the environment wins over the generated
		// one, which would only get 401s: never show it.
		_, _ = fmt.Fprintln(w, "The master token is the one you configured (auth.master_token).")
	case b.created:
		_, _ = fmt.Fprintf(w, "Master token (shown once; kept in %s, mode 0600):\n  %s\n",
			config.SecretsPath(b.cfg.Server.DataDir), b.secrets.MasterToken)
		_, _ = fmt.Fprintf(w, "Try:\n  curl -H 'Authorization: Bearer %s' %s/events\n", b.secrets.MasterToken, url)
	default:
		_, _ = fmt.Fprintf(w, "The master token is in %s\n", config.SecretsPath(b.cfg.Server.DataDir))
	}
	if loopbackOnly {
		_, _ = fmt.Fprintln(w, "Outbound requests may target loopback receivers because the server listens only on loopback.")
	}
	_, _ = fmt.Fprintln(w)
}

func bytesList(ss []string) [][]byte {
	out := make([][]byte, 0, len(ss))
	for _, s := range ss {
		out = append(out, []byte(s))
	}
	return out
}

func newInstanceID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	if host == "" {
		host = "qhronosd"
	}
	return host + "-" + hex.EncodeToString(b)
}
