package scheduler

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
)

// Fair share of the dispatch workers: no tenant scope and no destination may
// hold more than its share of an instance's pool at once, so a tenant whose
// receivers are slow or dead slows only itself. An attempt waits for both
// shares without holding a pool slot. While rows waiting in memory crowd
// the dispatcher's claim capacity, a row whose share is stalled (full, and
// no slot of it freed for shareStall) is handed back, uncounted, due when
// a slot of it should free, so other tenants' due rows are still claimed.
// Otherwise it waits: a hand-back is one write, and a burst of them would
// hold up the very claims it makes room for (SQLite has one writer).

// shareStall is how long a full share may go without freeing a slot before
// the rows waiting for it are handed back: a busy but healthy receiver
// frees slots every few milliseconds, a dead one only at its deadlines.
const shareStall = time.Second

// lendAge and lendReserve bound the idle workers a scope at its share may
// borrow (shares.mayLend): only while its attempts end within lendAge (a
// share's notion of progress, shareStall), so a tenant whose receivers
// hang stops borrowing within that, and only while a quarter of the pool
// stays free for others, so one whose borrowed attempts all hang at once
// still leaves newcomers that many workers until their deadlines.
const lendAge = shareStall

func lendReserve(workers int) int { return max(1, workers/4) }

// stuckAfter is how long a destination may hold workers without any of its
// attempts ending before /status and the metrics call it stuck.
const stuckAfter = 5 * time.Second

// shareCap is the number of workers a share of the pool allows: at least
// one, so a small pool still serves every tenant. No share (a Config built
// by hand) is the whole pool.
func shareCap(workers int, share float64) int {
	if share <= 0 || share > 1 {
		share = 1
	}
	return max(1, int(float64(workers)*share))
}

// ScopeOf is the tenant scope an event's attempts count against: the tag
// scope of the principal that created it ("*" for the master token and
// admin tokens, see auth.Principal.KeyScope). Events stored before scopes
// were recorded for every event fall back to their creator.
func ScopeOf(ev *model.Event) string {
	if ev.KeyScope != "" {
		return ev.KeyScope
	}
	return "created_by:" + ev.CreatedBy
}

// holding is what one scope or destination holds.
type holding struct {
	n int
	// progress is when a slot of it was last freed, or when it first took
	// one: a full share with no progress for shareStall is stalled.
	progress time.Time
	// ended is when an attempt of it last ended (zero: none yet since it
	// took its first slot), the evidence of fast turnover lending needs.
	ended time.Time
	// starts holds a scope's running attempts' start times, oldest first,
	// so that mayLend reads the oldest at once: scanning every run there,
	// on each take and each freed slot, cost a lone tenant's burst time in
	// proportion to the pool (unused for destinations).
	starts list.List
}

// run is one attempt holding its shares.
type run struct {
	scope, dest       string
	started, deadline time.Time
	// inScope is its entry in its scope's holding.starts.
	inScope *list.Element
}

// shares is the pure core: counts of workers held per scope and
// destination, the attempts holding them, and the admission rule. It is
// not safe for concurrent use (fairShare locks it).
type shares struct {
	scopeMax, destMax int
	// lendBelow: a scope at its share may borrow an idle worker while fewer
	// attempts than this run in all (mayLend); 0 never. othersWait, when
	// set, reports whether a scope other than the one given has attempts
	// waiting for their shares: then nothing is lent.
	lendBelow     int
	othersWait    func(scope string) bool
	scopes, dests map[string]*holding
	runs          map[uint64]run
	next          uint64
}

func newShares(scopeMax, destMax int) *shares {
	return &shares{scopeMax: scopeMax, destMax: destMax, scopes: map[string]*holding{}, dests: map[string]*holding{},
		runs: map[uint64]run{}}
}

// take admits an attempt of scope to dest (empty: none, e.g. a WebSocket
// push) when both are below their share, or the scope may borrow an idle
// worker, and returns its id.
func (s *shares) take(scope, dest string, now, deadline time.Time) (uint64, bool) {
	if !s.scopeRoom(scope, now) || (dest != "" && s.full(s.dests, dest, s.destMax)) {
		return 0, false
	}
	started := insertInOrder(&hold(s.scopes, scope, now).starts, now)
	if dest != "" {
		hold(s.dests, dest, now)
	}
	s.next++
	s.runs[s.next] = run{scope: scope, dest: dest, started: now, deadline: deadline, inScope: started}
	return s.next, true
}

// scopeRoom reports whether scope may take another worker: it is below its
// share, or it may borrow one.
func (s *shares) scopeRoom(scope string, now time.Time) bool {
	return !s.full(s.scopes, scope, s.scopeMax) || s.mayLend(scope, now)
}

// mayLend reports whether scope, at its share, may borrow an idle worker.
// The share exists so that a tenant whose receivers are slow or dead slows
// only itself; a lone tenant whose receivers answer would otherwise idle
// the rest of the pool (half of it at the default share). So a scope borrows
// only while no other scope waits for its shares, a quarter of the pool
// stays free (lendBelow), and its own attempts end quickly: one ended
// less than lendAge ago and none running has run that long. (A tenant
// whose receivers hang from the start never borrows: none of its
// attempts ends.) Borrowed workers are taken back as they end: none is
// lent again while another scope waits.
func (s *shares) mayLend(scope string, now time.Time) bool {
	if len(s.runs) >= s.lendBelow || (s.othersWait != nil && s.othersWait(scope)) {
		return false
	}
	h := s.scopes[scope]
	if h == nil || h.ended.IsZero() || now.Sub(h.ended) >= lendAge {
		return false
	}
	oldest := h.starts.Front()
	return oldest == nil || now.Sub(oldest.Value.(time.Time)) < lendAge
}

func (s *shares) full(m map[string]*holding, key string, limit int) bool {
	h, ok := m[key]
	return ok && h.n >= limit
}

func hold(m map[string]*holding, key string, now time.Time) *holding {
	h, ok := m[key]
	if !ok {
		h = &holding{progress: now}
		m[key] = h
	}
	h.n++
	return h
}

// give frees the slots of attempt id.
func (s *shares) give(id uint64, now time.Time) {
	r, ok := s.runs[id]
	if !ok {
		return
	}
	delete(s.runs, id)
	s.scopes[r.scope].starts.Remove(r.inScope)
	free(s.scopes, r.scope, now)
	if r.dest != "" {
		free(s.dests, r.dest, now)
	}
}

// insertInOrder puts t into l, which is kept oldest first. Attempts take
// their slots in nearly the order of the instants they read (each reads the
// clock just before the lock), so the place is found from the back in a
// step or two.
func insertInOrder(l *list.List, t time.Time) *list.Element {
	for e := l.Back(); e != nil; e = e.Prev() {
		if !t.Before(e.Value.(time.Time)) {
			return l.InsertAfter(t, e)
		}
	}
	return l.PushFront(t)
}

func free(m map[string]*holding, key string, now time.Time) {
	h := m[key]
	if h.n--; h.n == 0 {
		delete(m, key) // idle keys cost nothing
		return
	}
	h.progress, h.ended = now, now
}

// stalled reports whether a share that keeps an attempt of scope to dest
// waiting is full with no slot freed for stall, and when a slot of it
// should free: its earliest running deadline, no sooner than stall from
// now (an attempt may run past its deadline).
func (s *shares) stalled(scope, dest string, now time.Time, stall time.Duration) (bool, time.Time) {
	var stuck bool
	if h := s.scopes[scope]; h != nil && h.n >= s.scopeMax && now.Sub(h.progress) >= stall {
		stuck = true
	}
	if h := s.dests[dest]; dest != "" && h != nil && h.n >= s.destMax && now.Sub(h.progress) >= stall {
		stuck = true
	}
	if !stuck {
		return false, time.Time{}
	}
	var first time.Time
	for _, r := range s.runs {
		if (r.scope == scope || (dest != "" && r.dest == dest)) && (first.IsZero() || r.deadline.Before(first)) {
			first = r.deadline
		}
	}
	return true, maxTime(first, now.Add(stall))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// ShareStatus is what the dispatch workers hold, for /status and metrics.
// It names destinations but never a tenant scope.
type ShareStatus struct {
	Workers, ScopeLimit, DestinationLimit int
	Busy                                  int // attempts holding their shares
	LargestScope                          int // most workers one scope holds
	ScopesAtShare                         int // scopes holding their full share
	OldestAttempt                         time.Duration
	Destinations                          []DestinationLoad // busiest first
}

// DestinationLoad is one destination holding workers.
type DestinationLoad struct {
	Destination   string
	Workers       int
	OldestAttempt time.Duration
	// Overdue counts its attempts running past their deadline.
	Overdue int
	// Stuck: none of its attempts ended for stuckAfter while it held
	// workers, or one runs past its deadline.
	Stuck bool
}

// Stuck counts the stuck destinations.
func (st ShareStatus) Stuck() int {
	n := 0
	for _, d := range st.Destinations {
		if d.Stuck {
			n++
		}
	}
	return n
}

// snapshot reports the shares at now.
func (s *shares) snapshot(now time.Time) ShareStatus {
	st := ShareStatus{ScopeLimit: s.scopeMax, DestinationLimit: s.destMax, Busy: len(s.runs)}
	for _, h := range s.scopes {
		st.LargestScope = max(st.LargestScope, h.n)
		if h.n >= s.scopeMax {
			st.ScopesAtShare++
		}
	}
	byDest := map[string]*DestinationLoad{}
	for _, r := range s.runs {
		age := now.Sub(r.started)
		st.OldestAttempt = max(st.OldestAttempt, age)
		if r.dest == "" {
			continue
		}
		d := byDest[r.dest]
		if d == nil {
			d = &DestinationLoad{Destination: r.dest}
			byDest[r.dest] = d
		}
		d.Workers++
		d.OldestAttempt = max(d.OldestAttempt, age)
		if now.After(r.deadline) {
			d.Overdue++
		}
	}
	for key, d := range byDest {
		d.Stuck = d.Overdue > 0 || now.Sub(s.dests[key].progress) >= stuckAfter
		st.Destinations = append(st.Destinations, *d)
	}
	sort.Slice(st.Destinations, func(i, j int) bool {
		a, b := st.Destinations[i], st.Destinations[j]
		if a.Workers != b.Workers {
			return a.Workers > b.Workers
		}
		return a.Destination < b.Destination
	})
	return st
}

// fairShare is the shell around shares: attempts wait on it for a slot.
// Waiters queue per scope and per destination, in arrival order, and a
// freed slot admits the first waiters that now fit, under the lock, so a
// give wakes only the goroutines it admits. (Waking every waiter on every
// freed slot, as a broadcast would, cost a burst of a thousand waiting
// attempts most of the dispatcher's CPU in scheduler wake-ups.)
type fairShare struct {
	clock   Clock
	workers int
	// stopping closes when the dispatcher stops: waiting attempts have
	// sent nothing and are handed back at once.
	stopping <-chan struct{}
	mu       sync.Mutex
	s        *shares
	// waitScope and waitDest are the waiters queued on each scope and
	// destination (a waiter is in both queues, or only its scope's).
	waitScope, waitDest map[string]*list.List
	// recheck closes when waiters should look again whether their share
	// stalled (see stallCheckLocked); nil while no waiter asked.
	recheck chan struct{}
}

// waiter is one attempt queued for its shares.
type waiter struct {
	scope, dest string
	deadline    time.Time
	inScope     *list.Element
	inDest      *list.Element // nil without a destination
	// ready closes when the waiter is admitted; id is then its run's.
	ready chan struct{}
	id    uint64
}

func newFairShare(cfg Config, clock Clock, stopping <-chan struct{}) *fairShare {
	destMax := shareCap(cfg.Workers, cfg.DestinationShare)
	if cfg.MaxPerDestination > 0 {
		destMax = min(destMax, cfg.MaxPerDestination)
	}
	s := newShares(shareCap(cfg.Workers, cfg.ScopeShare), destMax)
	s.lendBelow = cfg.Workers - lendReserve(cfg.Workers)
	return newFairShareOf(clock, cfg.Workers, s, stopping)
}

func newFairShareOf(clock Clock, workers int, s *shares, stopping <-chan struct{}) *fairShare {
	f := &fairShare{clock: clock, workers: workers, stopping: stopping, s: s,
		waitScope: map[string]*list.List{}, waitDest: map[string]*list.List{}}
	s.othersWait = f.othersWaitLocked
	return f
}

// othersWaitLocked reports whether attempts of a scope other than scope
// wait for their shares; f.mu is held.
func (f *fairShare) othersWaitLocked(scope string) bool {
	switch len(f.waitScope) {
	case 0:
		return false
	case 1:
		_, mine := f.waitScope[scope]
		return !mine
	}
	return true
}

// errShareStalled: the share an attempt waits for is stalled;
// errStopping: the dispatcher stopped while it waited.
var (
	errShareStalled = errors.New("stalled")
	errStopping     = errors.New("dispatcher stopping")
)

// acquire waits for a slot within scope's and dest's shares until ctx ends
// or, when handBack says rows should not wait, the share it waits for is
// stalled (errShareStalled, with when to try again). release frees the
// slot; it must be called once.
func (f *fairShare) acquire(ctx context.Context, scope, dest string, handBack func() bool) (release func(), retryAt time.Time, err error) {
	now := f.clock.Now()
	// The attempt's deadline on the deployment clock, which due decisions
	// and the report read.
	deadline := now.Add(time.Hour) // no deadline: never overdue in the report
	if dl, ok := ctx.Deadline(); ok {
		deadline = now.Add(time.Until(dl))
	}
	f.mu.Lock()
	if release, ok := f.takeLocked(scope, dest, now, deadline); ok {
		f.mu.Unlock()
		return release, time.Time{}, nil
	}
	w := f.enqueue(scope, dest, deadline)
	for { // f.mu is held here
		stalled, at := f.s.stalled(scope, dest, f.clock.Now(), shareStall)
		recheck := f.stallCheckLocked()
		f.mu.Unlock()
		if stalled && handBack() {
			if id, ok := f.leave(w); ok {
				return func() { f.give(id) }, time.Time{}, nil
			}
			return nil, at, errShareStalled
		}
		var quit error
		select {
		case <-w.ready:
			return func() { f.give(w.id) }, time.Time{}, nil
		case <-ctx.Done():
			quit = ctx.Err()
		case <-f.stopping:
			quit = errStopping
		case <-recheck:
			f.mu.Lock()
			continue
		}
		if id, ok := f.leave(w); ok {
			f.give(id) // admitted as it gave up: pass the slot on
		}
		if quit == errStopping {
			return nil, f.clock.Now(), quit
		}
		return nil, f.clock.Now().Add(shareStall), quit
	}
}

// stallCheckLocked returns a channel that closes within shareStall, when
// the waiters look again whether their share stalled; f.mu is held. Every
// waiter shares it: in a lone tenant's burst nearly every attempt waits a
// moment for a freed slot, and a timer of its own each was an allocation
// and a timer-heap entry a wait.
func (f *fairShare) stallCheckLocked() <-chan struct{} {
	if f.recheck == nil {
		ch := make(chan struct{})
		f.recheck = ch
		after := f.clock.After(shareStall)
		go func() {
			select {
			case <-after:
			case <-f.stopping:
			}
			f.mu.Lock()
			f.recheck = nil
			f.mu.Unlock()
			close(ch)
		}()
	}
	return f.recheck
}

// tryAcquire is acquire without waiting: a slot if scope's and dest's
// shares have room now, for an attempt that ends within timeout. An
// attempt that finds room (under steady load, nearly every one) skips the
// context and timer of acquire's wait.
func (f *fairShare) tryAcquire(scope, dest string, timeout time.Duration) (release func(), ok bool) {
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.takeLocked(scope, dest, now, now.Add(timeout))
}

// takeLocked takes a slot if the shares have room; f.mu is held.
func (f *fairShare) takeLocked(scope, dest string, now, deadline time.Time) (release func(), ok bool) {
	id, ok := f.s.take(scope, dest, now, deadline)
	if !ok {
		return nil, false
	}
	return func() { f.give(id) }, true
}

// enqueue queues a waiter on its scope and destination; f.mu is held.
func (f *fairShare) enqueue(scope, dest string, deadline time.Time) *waiter {
	w := &waiter{scope: scope, dest: dest, deadline: deadline, ready: make(chan struct{})}
	w.inScope = queue(f.waitScope, scope).PushBack(w)
	if dest != "" {
		w.inDest = queue(f.waitDest, dest).PushBack(w)
	}
	return w
}

func queue(m map[string]*list.List, key string) *list.List {
	l, ok := m[key]
	if !ok {
		l = list.New()
		m[key] = l
	}
	return l
}

// leave takes a waiter out of its queues; if it was admitted meanwhile it
// reports its run's id instead.
func (f *fairShare) leave(w *waiter) (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-w.ready:
		return w.id, true
	default:
	}
	f.dequeue(w)
	return 0, false
}

// dequeue takes w out of its queues (dropping emptied ones); f.mu is held.
func (f *fairShare) dequeue(w *waiter) {
	unqueue(f.waitScope, w.scope, w.inScope)
	if w.inDest != nil {
		unqueue(f.waitDest, w.dest, w.inDest)
	}
}

func unqueue(m map[string]*list.List, key string, e *list.Element) {
	l := m[key]
	l.Remove(e)
	if l.Len() == 0 {
		delete(m, key)
	}
}

func (f *fairShare) give(id uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.s.runs[id]
	if !ok {
		return
	}
	now := f.clock.Now()
	scopeFull := func() bool { return !f.s.scopeRoom(r.scope, now) }
	destFull := func() bool { return r.dest != "" && f.s.full(f.s.dests, r.dest, f.s.destMax) }
	// Only waiters of the freed scope or destination can fit now, and of
	// those only where that share was the full one: a waiter queued on a
	// scope below its share waits for its destination, and the other way
	// round. (A scope at its share may have room again by borrowing.)
	wasScopeFull, wasDestFull := f.s.full(f.s.scopes, r.scope, f.s.scopeMax), destFull()
	f.s.give(id, now)
	if wasScopeFull {
		f.admit(f.waitScope[r.scope], now, scopeFull)
	}
	if wasDestFull {
		f.admit(f.waitDest[r.dest], now, destFull)
	}
}

// admit admits the waiters of l that fit, first come first served, until
// the share the queue is for is full again; f.mu is held.
func (f *fairShare) admit(l *list.List, now time.Time, full func() bool) {
	if l == nil {
		return
	}
	for e := l.Front(); e != nil && !full(); {
		w := e.Value.(*waiter)
		e = e.Next() // before dequeue removes it
		id, ok := f.s.take(w.scope, w.dest, now, w.deadline)
		if !ok {
			continue // its other share is full
		}
		f.dequeue(w)
		w.id = id
		close(w.ready)
	}
}

// status reports the shares now.
func (f *fairShare) status() ShareStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.s.snapshot(f.clock.Now())
	st.Workers = f.workers
	return st
}

// Shares reports what the dispatch workers hold now (metrics).
func (d *Dispatcher) Shares() ShareStatus { return d.share.status() }

// errHandedBack is execute's answer when the row was handed back before
// anything was sent (its share stayed full): nothing is recorded.
var errHandedBack = errors.New("handed back before sending")

// takeShare waits for the job's tenant and destination shares without
// holding a pool slot, as attempt holds one on entry and expects one held
// on return. ok false: the row was handed back instead, out says so.
func (d *Dispatcher) takeShare(ctx context.Context, jb *job, dest string) (release func(), out actions.Outcome, ok bool) {
	<-d.sem
	release, retryAt, err := d.share.acquire(ctx, ScopeOf(&jb.ev), dest, d.crowded)
	d.sem <- struct{}{}
	if err == nil {
		return release, actions.Outcome{}, true
	}
	if errors.Is(err, errStopping) || d.attemptCtx.Err() != nil {
		// Shutting down: another instance may take it at once.
		d.releaseIDs(jb.occ.ID)
		return nil, actions.Outcome{Err: errHandedBack}, false
	}
	// Stalled, or the attempt's deadline passed while waiting: nothing was
	// sent, so no attempt is counted; the row comes back when a slot of
	// its share should be free, and other rows are claimed meanwhile.
	note := "waiting for a worker: this tenant's attempts hold their share of the workers"
	if dest != "" {
		note = fmt.Sprintf("waiting for a worker: this tenant's attempts, or those to %s, hold their share of the workers", dest)
	}
	d.deferRow(jb, retryAt, note, d.clock.Now())
	return nil, actions.Outcome{Err: errHandedBack}, false
}

// crowded reports whether the rows held keep the next claim small (see
// room): only then do rows waiting for a stalled share go back.
func (d *Dispatcher) crowded() bool {
	_, busy := d.room()
	return busy
}

// shareFields are the dispatcher's /status figures of the fair share;
// destination names only under "destinations", which /status shows to
// admin readers only.
func shareFields(st ShareStatus, out map[string]any) {
	out["workers_busy"] = st.Busy
	out["scope_share"] = st.ScopeLimit
	out["destination_share"] = st.DestinationLimit
	out["largest_scope_workers"] = st.LargestScope
	out["scopes_at_share"] = st.ScopesAtShare
	out["oldest_attempt_ms"] = st.OldestAttempt.Milliseconds()
	out["stuck_destinations"] = st.Stuck()
	dests := make([]map[string]any, 0, len(st.Destinations))
	for _, dl := range st.Destinations {
		dests = append(dests, map[string]any{"destination": dl.Destination, "workers": dl.Workers,
			"oldest_attempt_ms": dl.OldestAttempt.Milliseconds(), "overdue": dl.Overdue, "stuck": dl.Stuck})
	}
	out["destinations"] = dests
}
