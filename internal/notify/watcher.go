package notify

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/startstop"
)

// Dependency is a backend the watcher pings: the database or coordination.
type Dependency struct {
	Name string // "database" or "redis"
	Ping func(ctx context.Context) error
}

// WatcherConfig tunes the watcher.
type WatcherConfig struct {
	// After is how long a dependency must be unreachable before operators
	// hear of it (default 1m).
	After time.Duration
	// Interval is the time between pings (default 5s).
	Interval time.Duration
	// Timeout bounds one ping (default 3s).
	Timeout time.Duration
	// Instance names this instance in the notices.
	Instance string
}

// Watcher pings this instance's dependencies and notifies once when one
// has been unreachable longer than After, and once when it recovers. Every
// instance watches for itself: what one instance cannot reach, another may.
type Watcher struct {
	startstop.Base
	deps     []Dependency
	notifier *Notifier
	now      func() time.Time
	cfg      WatcherConfig
	state    map[string]*depState
}

type depState struct {
	downSince time.Time // zero while reachable
	lastErr   string
	notified  bool
}

// NewWatcher builds the watcher.
func NewWatcher(deps []Dependency, n *Notifier, now func() time.Time, cfg WatcherConfig) *Watcher {
	if cfg.After <= 0 {
		cfg.After = time.Minute
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 3 * time.Second
	}
	state := make(map[string]*depState, len(deps))
	for _, d := range deps {
		state[d.Name] = &depState{}
	}
	return &Watcher{deps: deps, notifier: n, now: now, cfg: cfg, state: state}
}

// Start pings every interval until ctx ends or Stop.
func (w *Watcher) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := w.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	go func() {
		defer stopped()
		startstop.Every(ctx, w.cfg.Interval, true, w.RunOnce)
	}()
	return nil
}

// RunOnce pings every dependency once and notifies what changed. It is not
// safe for concurrent use (one loop calls it).
func (w *Watcher) RunOnce(ctx context.Context) {
	for _, d := range w.deps {
		pctx, cancel := context.WithTimeout(ctx, w.cfg.Timeout)
		err := d.Ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return // stopping: a cancelled ping says nothing about the backend
		}
		w.observe(ctx, d.Name, err, w.now())
	}
}

func (w *Watcher) observe(ctx context.Context, name string, err error, now time.Time) {
	st := w.state[name]
	fields := map[string]string{"dependency": name, "instance": w.cfg.Instance}
	if err == nil {
		if st.notified {
			fields["down_for"] = now.Sub(st.downSince).Round(time.Second).String()
			w.notifier.Notify(ctx, Notice{Kind: DependencyRecovered, At: now, Fields: fields,
				Title: fmt.Sprintf("%s reachable again", capital(name)),
				Text: fmt.Sprintf("Instance %s reaches the %s again after %s.", w.cfg.Instance, name,
					fields["down_for"])})
		}
		*st = depState{}
		return
	}
	if st.downSince.IsZero() {
		st.downSince = now
	}
	st.lastErr = err.Error()
	if st.notified || now.Sub(st.downSince) < w.cfg.After {
		return
	}
	st.notified = true
	fields["since"] = st.downSince.UTC().Format(time.RFC3339)
	fields["error"] = st.lastErr
	w.notifier.Notify(ctx, Notice{Kind: DependencyUnreachable, At: now, Fields: fields,
		Title: fmt.Sprintf("%s unreachable", capital(name)),
		Text: fmt.Sprintf("Instance %s has not reached the %s since %s: %s", w.cfg.Instance, name, fields["since"],
			st.lastErr)})
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
