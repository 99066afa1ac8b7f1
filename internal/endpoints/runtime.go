package endpoints

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/secrets"
	"github.com/qhronos/qhronos/internal/startstop"
)

// Defaults of the runtime's timing.
const (
	// DefaultRefresh is how old a cached endpoint may be: state changes
	// made by another instance or the API reach deliveries this late.
	DefaultRefresh = time.Second
	// DefaultFlushInterval is how often attempt tallies are folded into the
	// shared health.
	DefaultFlushInterval = 500 * time.Millisecond
	// maxInlineWait is the longest an attempt waits in process for a rate
	// or concurrency slot; longer waits hand the row back, due later.
	maxInlineWait = time.Second
	// concurrencyPoll is how often a waiting attempt retries a full
	// semaphore.
	concurrencyPoll = 20 * time.Millisecond
	// leaseMargin keeps a concurrency slot past the attempt's timeout, so a
	// crashed holder frees it soon after.
	leaseMargin = 30 * time.Second
)

// Store is what the runtime reads and writes (repository.Store).
type Store interface {
	UpdateEndpointHealth(ctx context.Context, id string, now time.Time,
		change func(h model.EndpointHealth) (model.EndpointHealth, bool)) (before, after model.EndpointHealth, err error)
	OpenCircuits(ctx context.Context, limit int) ([]string, error)
}

// Limits is the coordination the runtime needs: rate-limit buckets and
// concurrency slots shared by every instance.
type Limits interface {
	coordination.RateLimiter
	coordination.Semaphore
}

// Clock is the deployment's clock (scheduler.Clock).
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Notifier is told about circuit transitions (notify.Notifier).
type Notifier interface {
	CircuitChanged(ctx context.Context, ep *model.Endpoint, t Transition, h model.EndpointHealth)
}

// Observer receives the runtime's measurements (metrics).
type Observer interface {
	// ObserveEndpointWait counts attempts held back, by why: "rate_limit",
	// "concurrency", "circuit_open".
	ObserveEndpointWait(reason string)
	// ObserveEndpointAttempt counts one attempt to an endpoint.
	ObserveEndpointAttempt(endpointID string, ok bool, d time.Duration)
}

// Config is the runtime's collaborators and settings.
type Config struct {
	Store Store
	// Load reads an endpoint's configuration and health (unscoped);
	// model.ErrNotFound when it does not exist.
	Load     func(ctx context.Context, id string) (*model.Endpoint, error)
	Box      *secrets.Box
	Outbound outbound.Options
	Limits   Limits
	Clock    Clock
	Circuit  model.Circuit // the deployment's defaults
	Notifier Notifier      // optional
	Observer Observer      // optional
	Logger   *zap.Logger
	Refresh  time.Duration // default DefaultRefresh
	Flush    time.Duration // default DefaultFlushInterval
}

// Runtime resolves and admits endpoint deliveries. One runs per instance;
// what instances share lives in the store and in Limits.
type Runtime struct {
	startstop.Base
	cfg Config
	log *zap.Logger

	mu      sync.Mutex
	cache   map[string]*resolved
	tallies map[string]*Tally
	waiting map[string]int // attempts waiting in process, by endpoint
	loads   singleflight.Group
}

// resolved is one endpoint version made ready to deliver to, and the
// health read with it.
type resolved struct {
	ep          model.Endpoint
	fetchedAt   time.Time
	target      *actions.Target
	destination string
	circuit     model.Circuit
	current     string // plaintext signing secrets
	previous    string
}

// New returns a Runtime; Start it for the shared health to follow attempts.
func New(cfg Config) *Runtime {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultRefresh
	}
	if cfg.Flush <= 0 {
		cfg.Flush = DefaultFlushInterval
	}
	return &Runtime{cfg: cfg, log: cfg.Logger.Named("endpoints"), cache: map[string]*resolved{},
		tallies: map[string]*Tally{}, waiting: map[string]int{}}
}

// Admission is the verdict on one attempt to an endpoint. Exactly one of
// these holds: Err is set (the endpoint could not be resolved), Disabled,
// Defer is set (hand the row back uncounted, due then, with Note), or the
// attempt may go with Target and Secrets; Done must follow every admission.
type Admission struct {
	EndpointID  string
	Target      *actions.Target
	Destination string // host:port, for the per-destination limit
	Secrets     []string
	Timeout     time.Duration // the endpoint's own; zero when it has none
	Disabled    bool
	Defer       time.Time
	Note        string
	Err         error
	Retryable   bool // for Err: a later attempt may resolve it

	endpoint *model.Endpoint
	circuit  model.Circuit
	slot     string // concurrency slot holder, "" when none taken
	trial    string // trial token when this is the half-open trial
}

// Admit decides whether an attempt to endpoint id may go now. It may wait
// in process up to a second for a rate-limit or concurrency slot.
func (r *Runtime) Admit(ctx context.Context, id string) *Admission {
	adm := &Admission{EndpointID: id}
	res, err := r.get(ctx, id, false)
	if err != nil {
		adm.Err = err
		adm.Retryable = !errors.Is(err, model.ErrNotFound)
		return adm
	}
	if res.ep.Health.State == model.EndpointDisabled {
		// Failing the row is final: make sure with a fresh read (an
		// operator may just have enabled the endpoint).
		if res, err = r.get(ctx, id, true); err != nil {
			adm.Err, adm.Retryable = err, !errors.Is(err, model.ErrNotFound)
			return adm
		}
	}
	now := r.cfg.Clock.Now()
	switch res.ep.Health.State {
	case model.EndpointDisabled:
		adm.Disabled = true
		return adm
	case model.EndpointOpen:
		if res, err = r.admitOpen(ctx, adm, res, now); err != nil || !adm.Defer.IsZero() || adm.Disabled {
			if err != nil {
				adm.Err, adm.Retryable = err, true
			}
			return adm
		}
	}
	r.fill(adm, res, now)
	if !r.takeSlots(ctx, adm, res) {
		r.Done(ctx, adm, false, false, "", 0)
		adm.Target = nil
	}
	return adm
}

// admitOpen handles an open circuit: it disables an endpoint open too long,
// holds attempts during the cool-down, and lets one trial through after
// it. It returns the endpoint as it now stands.
func (r *Runtime) admitOpen(ctx context.Context, adm *Admission, res *resolved, now time.Time) (*resolved, error) {
	if _, ok := DisableOverdue(res.ep.Health, res.circuit, now); ok {
		if err := r.disable(ctx, &res.ep, res.circuit, now); err != nil {
			return res, err
		}
		adm.Disabled = true
		return res, nil
	}
	if cd := res.ep.Health.CoolDownUntil; cd != nil && now.Before(*cd) {
		// Still cooling down as of the last read: no need to ask the
		// database (the rows held back come again at its end).
		r.holdForCircuit(adm, *cd, now)
		return res, nil
	}
	token := uuid.NewString()
	trialFor := r.attemptTimeout(res) + leaseMargin
	_, after, err := r.cfg.Store.UpdateEndpointHealth(ctx, res.ep.ID, now, func(h model.EndpointHealth) (model.EndpointHealth, bool) {
		return BeginTrial(h, token, now, now.Add(trialFor))
	})
	if err != nil {
		return res, fmt.Errorf("begin trial delivery to endpoint %s: %w", res.ep.ID, err)
	}
	r.forget(res.ep.ID)
	switch {
	case after.State == model.EndpointOpen && after.TrialToken == token:
		adm.trial = token
		return res, nil
	case after.State == model.EndpointOpen:
		// Cooling down: wait for its end. Or another attempt is the trial:
		// look again after a cool-down (the trial's mark only bounds a
		// crashed trial; a live one ends with its attempt).
		until := now.Add(res.circuit.CoolDown)
		if after.CoolDownUntil != nil && after.CoolDownUntil.After(now) {
			until = *after.CoolDownUntil
		}
		if after.TrialUntil != nil && after.TrialUntil.Before(until) {
			until = *after.TrialUntil
		}
		r.holdForCircuit(adm, until, now)
		return res, nil
	case after.State == model.EndpointDisabled:
		adm.Disabled = true
		return res, nil
	}
	// Closed meanwhile by another instance's trial: deliver normally.
	return r.get(ctx, res.ep.ID, true)
}

// holdForCircuit hands the attempt back until the open circuit may let
// one through (at least a second on).
func (r *Runtime) holdForCircuit(adm *Admission, until, now time.Time) {
	adm.Defer, adm.Note = maxTime(until, now.Add(time.Second)), "waiting: the endpoint's circuit is open"
	r.observeWait("circuit_open")
}

// fill sets what the attempt sends with.
func (r *Runtime) fill(adm *Admission, res *resolved, now time.Time) {
	adm.endpoint, adm.circuit = &res.ep, res.circuit
	adm.Target, adm.Destination = res.target, res.destination
	adm.Timeout = time.Duration(res.ep.TimeoutMS) * time.Millisecond
	adm.Secrets = []string{res.current}
	if res.ep.PreviousSecretExpires != nil && now.Before(*res.ep.PreviousSecretExpires) &&
		res.previous != "" && res.previous != res.current {
		adm.Secrets = append(adm.Secrets, res.previous)
	}
}

// takeSlots takes the endpoint's concurrency slot and rate-limit token,
// waiting in process up to maxInlineWait. When it cannot, it sets
// adm.Defer and reports false.
func (r *Runtime) takeSlots(ctx context.Context, adm *Admission, res *resolved) bool {
	ep := &res.ep
	if ep.MaxConcurrency <= 0 && ep.RateLimit == nil {
		return true
	}
	room := r.enter(ep)
	defer r.leave(ep.ID)
	deadline := r.cfg.Clock.Now().Add(maxInlineWait)
	if ep.MaxConcurrency > 0 {
		holder := uuid.NewString()
		ttl := r.attemptTimeout(res) + leaseMargin
		for {
			ok, err := r.cfg.Limits.Acquire(ctx, "endpoint:"+ep.ID, holder, ep.MaxConcurrency, ttl)
			if err != nil {
				adm.Err, adm.Retryable = fmt.Errorf("endpoint %s concurrency: %w", ep.ID, err), true
				return false
			}
			if ok {
				adm.slot = holder
				break
			}
			now := r.cfg.Clock.Now()
			if !room || !now.Before(deadline) {
				adm.Defer, adm.Note = now.Add(maxInlineWait), "waiting: the endpoint's max_concurrency is reached"
				r.observeWait("concurrency")
				return false
			}
			if !r.wait(ctx, concurrencyPoll) {
				adm.Err, adm.Retryable = ctx.Err(), true
				return false
			}
		}
	}
	if ep.RateLimit == nil {
		return true
	}
	limit := coordination.Limit{Rate: ep.RateLimit.PerSecond, Burst: max(ep.RateLimit.Burst, 1)}
	for {
		v, err := r.cfg.Limits.Allow(ctx, "endpoint:"+ep.ID, limit)
		if err != nil {
			adm.Err, adm.Retryable = fmt.Errorf("endpoint %s rate limit: %w", ep.ID, err), true
			return false
		}
		if v.Allowed {
			return true
		}
		now := r.cfg.Clock.Now()
		if !room || now.Add(v.RetryAfter).After(deadline) {
			// Spread the rows handed back over the time the limit needs
			// for those already waiting, so they do not all return at once.
			ahead := float64(r.waitingFor(ep.ID)) / ep.RateLimit.PerSecond
			adm.Defer = now.Add(v.RetryAfter + time.Duration(ahead*float64(time.Second)))
			adm.Note = "waiting: the endpoint's rate limit"
			r.observeWait("rate_limit")
			return false
		}
		if !r.wait(ctx, v.RetryAfter) {
			adm.Err, adm.Retryable = ctx.Err(), true
			return false
		}
	}
}

// enter counts an attempt waiting in process for ep and reports whether
// there is room: beyond about a second's worth of the endpoint's limits,
// further attempts are handed back at once instead of holding rows.
func (r *Runtime) enter(ep *model.Endpoint) bool {
	room := 8
	if ep.RateLimit != nil {
		room = max(room, int(math.Ceil(ep.RateLimit.PerSecond))+ep.RateLimit.Burst)
	}
	room = max(room, 2*ep.MaxConcurrency)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting[ep.ID]++
	return r.waiting[ep.ID] <= room
}

func (r *Runtime) leave(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.waiting[id]--; r.waiting[id] <= 0 {
		delete(r.waiting, id)
	}
}

func (r *Runtime) waitingFor(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting[id]
}

func (r *Runtime) wait(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-r.cfg.Clock.After(d):
		return true
	}
}

// Done records the attempt an admission let through (ran reports whether it
// did; ok, errText and d its result) and frees its concurrency slot. The
// trial's result changes the circuit at once; other results are tallied and
// folded in by the loop Start runs. An admission that did not run gives its trial back.
func (r *Runtime) Done(ctx context.Context, adm *Admission, ran, ok bool, errText string, d time.Duration) {
	if adm == nil || adm.endpoint == nil {
		return
	}
	if adm.slot != "" {
		if err := r.cfg.Limits.Release(context.WithoutCancel(ctx), "endpoint:"+adm.EndpointID, adm.slot); err != nil {
			r.log.Warn("release endpoint concurrency slot", zap.String("endpoint_id", adm.EndpointID), zap.Error(err))
		}
		adm.slot = ""
	}
	if !ran {
		if adm.trial != "" {
			r.giveBackTrial(context.WithoutCancel(ctx), adm)
		}
		return
	}
	now := r.cfg.Clock.Now()
	if r.cfg.Observer != nil {
		r.cfg.Observer.ObserveEndpointAttempt(adm.EndpointID, ok, d)
	}
	if adm.trial != "" {
		r.endTrial(context.WithoutCancel(ctx), adm, ok, errText, now)
		return
	}
	r.mu.Lock()
	t := r.tallies[adm.EndpointID]
	if t == nil {
		t = &Tally{}
		r.tallies[adm.EndpointID] = t
	}
	t.Add(ok, errText, now)
	r.mu.Unlock()
}

// giveBackTrial clears a trial mark whose delivery did not go, so the next
// attempt may be the trial at once.
func (r *Runtime) giveBackTrial(ctx context.Context, adm *Admission) {
	token := adm.trial
	adm.trial = ""
	_, _, err := r.cfg.Store.UpdateEndpointHealth(ctx, adm.EndpointID, r.cfg.Clock.Now(), func(h model.EndpointHealth) (model.EndpointHealth, bool) {
		if h.TrialToken != token {
			return h, false
		}
		h.TrialToken, h.TrialUntil = "", nil
		return h, true
	})
	if err != nil {
		r.log.Warn("give back trial delivery", zap.String("endpoint_id", adm.EndpointID), zap.Error(err))
	}
}

func (r *Runtime) endTrial(ctx context.Context, adm *Admission, ok bool, errText string, now time.Time) {
	token := adm.trial
	adm.trial = ""
	before, after, err := r.cfg.Store.UpdateEndpointHealth(ctx, adm.EndpointID, now, func(h model.EndpointHealth) (model.EndpointHealth, bool) {
		next, _ := EndTrial(h, token, ok, errText, adm.circuit, now)
		return next, h.TrialToken == token
	})
	r.forget(adm.EndpointID)
	if err != nil {
		// The trial's mark lapses by itself and another trial follows.
		r.log.Warn("record trial delivery", zap.String("endpoint_id", adm.EndpointID), zap.Error(err))
		return
	}
	if before.State == model.EndpointOpen && after.State == model.EndpointHealthy {
		r.log.Info("endpoint circuit closed", zap.String("endpoint_id", adm.EndpointID))
		r.notify(ctx, adm.endpoint, Closed, after)
	}
}

var _ startstop.Service = (*Runtime)(nil)

// Start runs the runtime's loop until Stop or ctx ends: attempt tallies
// are folded into the shared health every flush interval, and open
// circuits are checked for disabling every minute. Stop flushes once more.
func (r *Runtime) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := r.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	go func() {
		defer stopped()
		r.run(ctx)
	}()
	return nil
}

func (r *Runtime) run(ctx context.Context) {
	ticker := time.NewTicker(r.cfg.Flush)
	defer ticker.Stop()
	scanEvery := max(1, int(time.Minute/r.cfg.Flush))
	for tick := 0; ; tick++ {
		select {
		case <-ctx.Done():
			r.Flush(context.WithoutCancel(ctx))
			return
		case <-ticker.C:
		}
		r.Flush(ctx)
		if tick%scanEvery == 0 {
			if err := r.DisableOverdue(ctx); err != nil {
				r.log.Warn("check open circuits", zap.Error(err))
			}
		}
	}
}

// Flush folds the tallies taken so far into the shared health, opening
// circuits where they say so.
func (r *Runtime) Flush(ctx context.Context) {
	r.mu.Lock()
	tallies := r.tallies
	r.tallies = map[string]*Tally{}
	r.mu.Unlock()
	for id, t := range tallies {
		res, err := r.get(ctx, id, false)
		if err != nil {
			r.log.Warn("fold endpoint attempts", zap.String("endpoint_id", id), zap.Error(err))
			continue
		}
		now := r.cfg.Clock.Now()
		var moved Transition
		_, after, err := r.cfg.Store.UpdateEndpointHealth(ctx, id, now, func(h model.EndpointHealth) (model.EndpointHealth, bool) {
			next, tr := Record(h, *t, res.circuit, now)
			moved = tr
			return next, true
		})
		if err != nil {
			r.log.Warn("fold endpoint attempts", zap.String("endpoint_id", id), zap.Error(err))
			continue
		}
		if moved == Opened {
			r.forget(id)
			r.log.Warn("endpoint circuit opened", zap.String("endpoint_id", id),
				zap.Int("consecutive_failures", after.ConsecutiveFailures), zap.String("last_error", after.LastError))
			r.notify(ctx, &res.ep, Opened, after)
		}
	}
}

// DisableOverdue disables the endpoints whose circuit stayed open longer
// than their disable_after.
func (r *Runtime) DisableOverdue(ctx context.Context) error {
	ids, err := r.cfg.Store.OpenCircuits(ctx, 1000)
	if err != nil {
		return err
	}
	for _, id := range ids {
		res, err := r.get(ctx, id, true)
		if err != nil {
			return err
		}
		if err := r.disable(ctx, &res.ep, res.circuit, r.cfg.Clock.Now()); err != nil {
			return err
		}
	}
	return nil
}

// disable turns an endpoint open too long into disabled, once across
// instances.
func (r *Runtime) disable(ctx context.Context, ep *model.Endpoint, c model.Circuit, now time.Time) error {
	var did bool
	_, after, err := r.cfg.Store.UpdateEndpointHealth(ctx, ep.ID, now, func(h model.EndpointHealth) (model.EndpointHealth, bool) {
		next, ok := DisableOverdue(h, c, now)
		did = ok
		return next, ok
	})
	if err != nil {
		return fmt.Errorf("disable endpoint %s: %w", ep.ID, err)
	}
	r.forget(ep.ID)
	if did {
		r.log.Warn("endpoint disabled: its circuit stayed open", zap.String("endpoint_id", ep.ID),
			zap.Duration("disable_after", c.DisableAfter))
		r.notify(ctx, ep, Disabled, after)
	}
	return nil
}

func (r *Runtime) notify(ctx context.Context, ep *model.Endpoint, t Transition, h model.EndpointHealth) {
	if r.cfg.Notifier != nil {
		r.cfg.Notifier.CircuitChanged(ctx, ep, t, h)
	}
}

func (r *Runtime) observeWait(reason string) {
	if r.cfg.Observer != nil {
		r.cfg.Observer.ObserveEndpointWait(reason)
	}
}

// attemptTimeout bounds one attempt to the endpoint, for leases.
func (r *Runtime) attemptTimeout(res *resolved) time.Duration {
	if res.ep.TimeoutMS > 0 {
		return time.Duration(res.ep.TimeoutMS) * time.Millisecond
	}
	return actions.DefaultTimeout
}

// forget marks a cached endpoint stale so the next use reads it again; its
// resolved client is kept for the same version.
func (r *Runtime) forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur := r.cache[id]; cur != nil {
		stale := *cur
		stale.fetchedAt = time.Time{}
		r.cache[id] = &stale
	}
}

// get returns endpoint id ready to deliver to, from the cache while it is
// fresh. A new version is resolved again (client, secrets); a refresh of
// the same version keeps the client, so OAuth2 tokens and connections
// survive it.
func (r *Runtime) get(ctx context.Context, id string, fresh bool) (*resolved, error) {
	r.mu.Lock()
	old := r.cache[id]
	r.mu.Unlock()
	if old != nil && !fresh && r.cfg.Clock.Now().Sub(old.fetchedAt) < r.cfg.Refresh {
		return old, nil
	}
	if fresh {
		return r.load(ctx, id)
	}
	// Attempts that find it stale together wait for one read: one a second
	// per endpoint, not one per attempt in flight.
	v, err, _ := r.loads.Do(id, func() (any, error) { return r.load(ctx, id) })
	if err != nil {
		return nil, err
	}
	return v.(*resolved), nil
}

// load reads endpoint id and caches it. A new version is resolved; the
// same version keeps its client.
func (r *Runtime) load(ctx context.Context, id string) (*resolved, error) {
	now := r.cfg.Clock.Now()
	r.mu.Lock()
	old := r.cache[id]
	r.mu.Unlock()
	ep, err := r.cfg.Load(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load endpoint %s: %w", id, err)
	}
	if ep.DeletedAt != nil {
		return nil, fmt.Errorf("load endpoint %s: deleted: %w", id, model.ErrNotFound)
	}
	var built *resolved
	if old == nil || old.ep.Version != ep.Version {
		if built, err = r.resolve(ep); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Loads that raced here share the version resolved first: one client,
	// so one OAuth2 token and one connection pool per endpoint.
	res := built
	if cur := r.cache[id]; cur != nil && cur.ep.Version == ep.Version {
		copied := *cur
		res = &copied
	} else if res == nil {
		copied := *old
		res = &copied
	}
	res.ep, res.fetchedAt = *ep, now
	r.cache[id] = res
	return res, nil
}

// resolve opens an endpoint version's secrets and builds its client.
func (r *Runtime) resolve(ep *model.Endpoint) (*resolved, error) {
	res := &resolved{ep: *ep, circuit: Effective(r.cfg.Circuit, ep.Circuit)}
	open := func(sealed []byte, what string) (string, error) {
		if len(sealed) == 0 {
			return "", nil
		}
		plain, err := r.cfg.Box.Open(sealed)
		if err != nil {
			return "", fmt.Errorf("decrypt endpoint %s %s: %w", ep.ID, what, err)
		}
		return string(plain), nil
	}
	var err error
	if res.current, err = open(ep.Secret, "signing secret"); err != nil {
		return nil, err
	}
	if res.previous, err = open(ep.PreviousSecret, "previous signing secret"); err != nil {
		return nil, err
	}
	auth := outbound.Auth{}
	if ep.Auth != nil {
		var hidden model.EndpointAuthSecrets
		plain, err := open(ep.AuthSecret, "auth secrets")
		if err != nil {
			return nil, err
		}
		if plain != "" {
			if err := json.Unmarshal([]byte(plain), &hidden); err != nil {
				return nil, fmt.Errorf("decode endpoint %s auth secrets: %w", ep.ID, err)
			}
		}
		auth = outbound.Auth{Type: ep.Auth.Type, Username: ep.Auth.Username, Password: hidden.Password,
			TokenURL: ep.Auth.TokenURL, ClientID: ep.Auth.ClientID, ClientSecret: hidden.ClientSecret,
			Audience: ep.Auth.Audience, Scopes: ep.Auth.Scopes, CertificatePEM: []byte(ep.Auth.Certificate),
			PrivateKeyPEM: []byte(hidden.PrivateKey), CACertificatePEM: []byte(ep.Auth.CACertificate)}
	}
	if kind := outbound.BrokerKind(ep.URL); kind != "" {
		return r.resolveBroker(res, ep, kind, auth)
	}
	var client *http.Client
	if client, err = outbound.NewAuthClient(r.cfg.Outbound, auth); err != nil {
		return nil, fmt.Errorf("endpoint %s auth: %w", ep.ID, err)
	}
	dest, err := outbound.Destination(ep.URL)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s url: %w", ep.ID, err)
	}
	res.destination = dest
	res.target = &actions.Target{EndpointID: ep.ID, URL: ep.URL, Headers: ep.Headers, Client: client,
		RetryUnauthorized: auth.Type == outbound.AuthOAuth2ClientCredentials}
	return res, nil
}

// resolveBroker completes an endpoint whose URL is a message broker's: its
// auth gives the broker user and password (basic) or the client certificate
// and CA (mtls), and the destination limited is the broker's host:port.
func (r *Runtime) resolveBroker(res *resolved, ep *model.Endpoint, kind string, auth outbound.Auth) (*resolved, error) {
	addr, err := outbound.CheckBrokerURL(kind, ep.URL, r.cfg.Outbound)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s url: %w", ep.ID, err)
	}
	bt := &actions.BrokerTarget{}
	switch auth.Type {
	case outbound.AuthNone:
	case outbound.AuthBasic:
		bt.Username, bt.Password, bt.HasUser = auth.Username, auth.Password, true
	case outbound.AuthMTLS:
		if !addr.TLS {
			return nil, fmt.Errorf("endpoint %s auth: mtls needs the broker's TLS scheme (%s://)", ep.ID, outbound.BrokerSchemes[kind].TLS)
		}
	default:
		return nil, fmt.Errorf("endpoint %s auth: %s is not supported for a broker", ep.ID, auth.Type)
	}
	if addr.TLS {
		if bt.TLS, err = outbound.BrokerTLS(r.cfg.Outbound, auth, addr.Host); err != nil {
			return nil, fmt.Errorf("endpoint %s auth: %w", ep.ID, err)
		}
	}
	res.destination = addr.Host
	res.target = &actions.Target{EndpointID: ep.ID, URL: ep.URL, Headers: ep.Headers, Broker: bt}
	return res, nil
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
