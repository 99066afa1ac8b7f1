package endpoints_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/endpoints"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
	"github.com/qhronos/qhronos/internal/secrets"
)

var defaults = model.Circuit{Failures: 2, FailureRatio: 0.5, MinRequests: 20, Window: time.Minute,
	CoolDown: 30 * time.Second, DisableAfter: time.Hour}

// transitions records the notices the runtime asks for.
type transitions struct {
	mu  sync.Mutex
	got []endpoints.Transition
}

func (tr *transitions) CircuitChanged(_ context.Context, _ *model.Endpoint, t endpoints.Transition, _ model.EndpointHealth) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.got = append(tr.got, t)
}

func (tr *transitions) list() []endpoints.Transition {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]endpoints.Transition(nil), tr.got...)
}

type fixture struct {
	store  *repository.Store
	clock  endpoints.Clock
	limits endpoints.Limits
	box    *secrets.Box
	notes  *transitions
}

func newFixture(t *testing.T, store *repository.Store, clock endpoints.Clock) *fixture {
	box, err := secrets.NewBox("0123456789abcdef0123456789abcdef")
	require.NoError(t, err)
	return &fixture{store: store, clock: clock, limits: coordination.NewLocal(clock.Now), box: box, notes: &transitions{}}
}

// instance is one server's runtime over the shared store and limits.
func (f *fixture) instance() *endpoints.Runtime {
	return endpoints.New(endpoints.Config{Store: f.store, Box: f.box, Limits: f.limits, Clock: f.clock,
		Outbound: outbound.Options{AllowLoopback: true}, Circuit: defaults, Notifier: f.notes,
		Load: func(ctx context.Context, id string) (*model.Endpoint, error) {
			ep, err := f.store.GetEndpoint(ctx, id)
			return &ep, err
		}})
}

func (f *fixture) endpoint(t *testing.T, edit func(ep *model.Endpoint)) string {
	sealed, err := f.box.Seal([]byte("whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
	require.NoError(t, err)
	now := f.clock.Now()
	ep := &model.Endpoint{ID: uuid.NewString(), Name: "receiver", URL: "http://127.0.0.1:9/hooks", Secret: sealed,
		Version: 1, CreatedAt: now, UpdatedAt: now}
	if edit != nil {
		edit(ep)
	}
	require.NoError(t, f.store.CreateEndpoint(context.Background(), ep))
	return ep.ID
}

func forEachStore(t *testing.T, test func(t *testing.T, store *repository.Store)) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			test(t, b.Open(t))
		})
	}
}

// TestCircuitIsSharedByInstances: failures seen by one instance open the
// circuit for both; during the cool-down both hold attempts; afterwards
// exactly one trial goes, and its success closes the circuit.
func TestCircuitIsSharedByInstances(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, store *repository.Store) {
		ctx := t.Context()
		clock := schedulertest.NewClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
		f := newFixture(t, store, clock)
		id := f.endpoint(t, nil)
		a, b := f.instance(), f.instance()

		for range 2 {
			adm := a.Admit(ctx, id)
			require.NoError(t, adm.Err)
			require.NotNil(t, adm.Target)
			require.Equal(t, "127.0.0.1:9", adm.Destination)
			require.Len(t, adm.Secrets, 1)
			a.Done(ctx, adm, true, false, "receiver answered 503", 10*time.Millisecond)
		}
		a.Flush(ctx)
		h, err := health(ctx, store, id)
		require.NoError(t, err)
		require.Equal(t, model.EndpointOpen, h.State)
		require.Equal(t, []endpoints.Transition{endpoints.Opened}, f.notes.list())

		held := b.Admit(ctx, id)
		require.Nil(t, held.Target)
		require.Equal(t, clock.Now().Add(30*time.Second), held.Defer, "held until the cool-down ends")
		require.Contains(t, held.Note, "circuit is open")

		clock.Advance(30 * time.Second)
		trial := b.Admit(ctx, id)
		require.NoError(t, trial.Err)
		require.NotNil(t, trial.Target, "the first attempt after the cool-down is the trial")
		other := a.Admit(ctx, id)
		require.False(t, other.Defer.IsZero(), "one trial at a time")

		b.Done(ctx, trial, true, true, "", 5*time.Millisecond)
		h, err = health(ctx, store, id)
		require.NoError(t, err)
		require.Equal(t, model.EndpointHealthy, h.State)
		require.Equal(t, []endpoints.Transition{endpoints.Opened, endpoints.Closed}, f.notes.list())
		again := a.Admit(ctx, id)
		require.NotNil(t, again.Target, "closed for every instance")
		a.Done(ctx, again, true, true, "", time.Millisecond)
	})
}

// TestOpenTooLongDisables: a circuit open past disable_after disables the
// endpoint once; its attempts then fail without being sent.
func TestOpenTooLongDisables(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, store *repository.Store) {
		ctx := t.Context()
		clock := schedulertest.NewClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
		f := newFixture(t, store, clock)
		id := f.endpoint(t, func(ep *model.Endpoint) { ep.Circuit = &model.Circuit{DisableAfter: 10 * time.Minute} })
		rt := f.instance()
		for range 2 {
			adm := rt.Admit(ctx, id)
			rt.Done(ctx, adm, true, false, "dial tcp: connection refused", time.Millisecond)
		}
		rt.Flush(ctx)
		clock.Advance(9 * time.Minute)
		require.NoError(t, rt.DisableOverdue(ctx))
		h, err := health(ctx, store, id)
		require.NoError(t, err)
		require.Equal(t, model.EndpointOpen, h.State, "its own disable_after is ten minutes")

		clock.Advance(time.Minute)
		adm := rt.Admit(ctx, id)
		require.True(t, adm.Disabled)
		require.NoError(t, rt.DisableOverdue(ctx))
		h, err = health(ctx, store, id)
		require.NoError(t, err)
		require.Equal(t, model.EndpointDisabled, h.State)
		require.Equal(t, model.DisabledCircuitOpen, h.DisabledReason)
		require.Equal(t, []endpoints.Transition{endpoints.Opened, endpoints.Disabled}, f.notes.list(), "disabled once")
	})
}

// TestLimitsHoldAttemptsBack: a rate limit beyond the in-process wait hands
// the attempt back, due when a token frees; a full max_concurrency waits
// for a slot and hands back when none frees in time.
func TestLimitsHoldAttemptsBack(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, store *repository.Store) {
		ctx := t.Context()
		f := newFixture(t, store, scheduler.SystemClock{})
		slow := f.endpoint(t, func(ep *model.Endpoint) { ep.RateLimit = &model.RateLimit{PerSecond: 0.01, Burst: 1} })
		rt := f.instance()
		first := rt.Admit(ctx, slow)
		require.NotNil(t, first.Target)
		rt.Done(ctx, first, true, true, "", time.Millisecond)
		second := rt.Admit(ctx, slow)
		require.Nil(t, second.Target)
		require.Contains(t, second.Note, "rate limit")
		wait := time.Until(second.Defer)
		require.Greater(t, wait, 90*time.Second, "due when the next token frees (100 s at 0.01/s)")

		single := f.endpoint(t, func(ep *model.Endpoint) { ep.MaxConcurrency = 1 })
		holder := rt.Admit(ctx, single)
		require.NotNil(t, holder.Target)
		next := make(chan *endpoints.Admission)
		go func() { next <- rt.Admit(ctx, single) }()
		rt.Done(ctx, holder, true, true, "", time.Millisecond)
		got := <-next
		require.NotNil(t, got.Target, "the freed slot is taken by the waiting attempt")
		late := rt.Admit(ctx, single)
		require.Nil(t, late.Target, "no slot frees within the in-process wait")
		require.Contains(t, late.Note, "max_concurrency")
		rt.Done(ctx, got, true, true, "", time.Millisecond)
	})
}

// health reads an endpoint's shared health as the API shows it.
func health(ctx context.Context, s *repository.Store, id string) (model.EndpointHealth, error) {
	ep, err := s.GetEndpoint(ctx, id)
	return ep.Health, err
}
