package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/planner"
	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
)

// t0 is the stub clock's start; events are created ahead of it.
var t0 = time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

// eachBackend runs fn on SQLite and PostgreSQL.
func eachBackend(t *testing.T, fn func(t *testing.T, s *repository.Store)) {
	t.Helper()
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.Open(t))
		})
	}
}

// env is one scheduler instance over a store, a stub clock and a loopback
// webhook receiver reached through the real webhook action.
type env struct {
	t     testing.TB
	store *repository.Store
	clock *schedulertest.Clock
	recv  *schedulertest.Receiver
	cfg   scheduler.Config
	exp   *scheduler.Expander
	disp  *scheduler.Dispatcher
	resc  *scheduler.Rescuer
	// instances numbers the dispatchers made (newDispatcher).
	instances int
}

// testConfig is the product defaults (config.Default) with a shorter
// lookahead, a smaller pool and shorter retries; no data-directory lock, so
// not exclusive.
func testConfig() scheduler.Config {
	cfg := scheduler.ConfigFrom(config.Default(), "test")
	cfg.Exclusive, cfg.LogDeliveries = false, false
	cfg.Lookahead, cfg.Workers = time.Hour, 8
	cfg.Retry.MaxAttempts, cfg.Retry.InitialBackoff, cfg.Retry.MaxBackoff = 3, 10*time.Second, time.Minute
	return cfg
}

// archiverConfig is the product's archival defaults, changed by mut.
func archiverConfig(mut func(c *scheduler.ArchiverConfig)) scheduler.ArchiverConfig {
	c := testConfig().Archive
	if mut != nil {
		mut(&c)
	}
	return c
}

// holdTillInstant reads the due rows 200 ms before t0 plus a minute (the
// instant of e.event's first occurrence), expecting n, and returns once
// their holder waits for that instant: what the API does next happens
// while the rows are held.
func (e *env) holdTillInstant(t *testing.T, n int) {
	t.Helper()
	e.clock.Set(t0.Add(time.Minute - 200*time.Millisecond))
	got, err := e.disp.RunOnce(deadline(t))
	require.NoError(t, err)
	require.Equal(t, n, got)
	require.NoError(t, e.clock.WaitForWaiters(deadline(t), 1))
}

func newEnv(t *testing.T, s *repository.Store, cfg scheduler.Config) *env {
	t.Helper()
	e := &env{t: t, store: s, clock: schedulertest.NewClock(t0), recv: schedulertest.NewReceiver(t), cfg: cfg}
	e.exp = scheduler.NewExpander(cfg, s, nil, e.clock, nil, zaptest.NewLogger(t))
	e.disp = e.newDispatcher(cfg, nil)
	e.resc = scheduler.NewRescuer(cfg, s, e.clock, nil)
	return e
}

// registry returns actions with the real webhook allowed to reach loopback.
func registry(t testing.TB, clock scheduler.Clock) *actions.Registry {
	reg := actions.NewRegistry()
	require.NoError(t, reg.Register(actions.NewWebhook(actions.HTTPConfig{
		Outbound: outbound.Options{AllowLoopback: true}, Now: clock.Now})))
	return reg
}

func (e *env) newDispatcher(cfg scheduler.Config, reg *actions.Registry) *scheduler.Dispatcher {
	if reg == nil {
		reg = registry(e.t, e.clock)
	}
	// Each dispatcher is an instance of its own: its own member of the
	// dispatch group, with its own share of the bucket slots.
	e.instances++
	cfg.InstanceID = fmt.Sprintf("%s-%d", cfg.InstanceID, e.instances)
	d := scheduler.NewDispatcher(cfg, scheduler.DispatcherDeps{Store: e.store, Registry: reg, Clock: e.clock,
		Logger: zaptest.NewLogger(e.t), Rand: func() float64 { return 0.5 },
		Secrets: func(*model.Event) ([]string, error) { return []string{"test-secret"}, nil }})
	e.t.Cleanup(d.Close)
	return d
}

// runLoop starts the dispatcher's Run loop; cancel ends it, and done
// closes once Run has returned.
func (e *env) runLoop() (cancel context.CancelFunc, done <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		e.disp.Run(ctx, nil)
	}()
	return cancel, closed
}

// event is a one-time webhook event at the receiver, at t0+1m unless mut
// changes it.
func (e *env) event(mut func(ev *model.Event)) *model.Event {
	params, _ := json.Marshal(map[string]string{"url": e.recv.URL + "/hook"})
	ev := &model.Event{ID: uuid.NewString(), Name: "report", StartTime: t0.Add(time.Minute), Timezone: "UTC",
		Action: model.Action{Type: "webhook", Params: params}, Tags: []string{"a"}, Metadata: json.RawMessage(`{}`), CatchUp: "all",
		Status: model.EventActive, CreatedVia: "api", Version: 1, CreatedAt: t0, UpdatedAt: t0}
	if mut != nil {
		mut(ev)
	}
	return ev
}

// create stores ev with its first window, as the events service does.
func (e *env) create(ev *model.Event) *model.Event {
	e.t.Helper()
	var rows []model.Planned
	if ev.Status == model.EventActive {
		rule, err := ev.Compile(e.cfg.Recurrence)
		require.NoError(e.t, err)
		plan, err := e.cfg.Window().Next(&planner.Series{Rule: rule, EventID: ev.ID}, nil, e.clock.Now())
		require.NoError(e.t, err)
		ev.ExpandedUntil, ev.NextRunAt, rows = &plan.Cursor, plan.NextRunAt(), plan.Rows
	}
	require.NoError(e.t, e.store.CreateEvent(context.Background(), ev, rows...))
	return ev
}

// dispatch claims once and waits for every outcome to be written.
func (e *env) dispatch() int {
	e.t.Helper()
	return dispatchWith(e.t, e.disp)
}

func dispatchWith(t testing.TB, d *scheduler.Dispatcher) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n, err := d.RunOnce(ctx)
	require.NoError(t, err)
	require.NoError(t, d.Wait(ctx))
	return n
}

func (e *env) occurrences(eventID string) []model.Occurrence {
	e.t.Helper()
	occ, err := e.store.ListOccurrences(context.Background(), model.OccurrenceFilter{EventID: eventID,
		Unrestricted: true, Limit: 10000})
	require.NoError(e.t, err)
	// oldest first
	for i, j := 0, len(occ)-1; i < j; i, j = i+1, j-1 {
		occ[i], occ[j] = occ[j], occ[i]
	}
	return occ
}

func (e *env) statuses(eventID string) []model.OccurrenceStatus {
	out := []model.OccurrenceStatus{}
	for _, o := range e.occurrences(eventID) {
		out = append(out, o.Status)
	}
	return out
}

func (e *env) reload(id string) model.Event {
	e.t.Helper()
	ev, err := e.store.GetEventAny(context.Background(), id)
	require.NoError(e.t, err)
	return ev
}

// awaitEvent reloads the event until ok holds and returns it: the
// dispatcher's bookkeeper writes last_run_at, last_status, next_run_at and
// a finished series' inactive status within an interval (0.5 s) after the
// outcome, not in the outcome's transaction. Fails after 30 s.
func (e *env) awaitEvent(id string, ok func(model.Event) bool, what string) model.Event {
	e.t.Helper()
	var ev model.Event
	if !qhronostest.Eventually(30*time.Second, nil, func() bool { ev = e.reload(id); return ok(ev) }) {
		e.t.Fatalf("event %s: %s: not within 30 s (status %s, last_status %q)", id, what, ev.Status, ev.LastStatus)
	}
	return ev
}

// inactive reports whether the event ended.
func inactive(ev model.Event) bool { return ev.Status == model.EventInactive }

func ptr[T any](v T) *T { return &v }
