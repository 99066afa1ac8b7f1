package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Probe limits.
const (
	// maxProbeRate keeps the probe ticker's interval well above zero; beyond
	// it the in-flight cap would skip most ticks anyway.
	maxProbeRate = 10_000
	// maxProbesInFlight bounds the probes waiting on a stalled server, so the
	// bench does not pile up connections itself.
	maxProbesInFlight = 64
	// probeTimeout ends a probe the server does not answer; it still counts,
	// as an error with this latency.
	probeTimeout = 10 * time.Second
)

// apiProbe measures how the API answers reads while the server drains due
// occurrences: it sends GET /events/{id}, for events this run created, at a
// steady rate.
type apiProbe struct {
	client *http.Client
	server *url.URL
	token  string
	rate   float64 // requests per second
	now    func() time.Time
}

// createdIDs collects the ids of the events this run created, for the probe
// to pick from; only kept when probing, as a large run has a million.
type createdIDs struct {
	mu  sync.Mutex
	ids []string
}

func (c *createdIDs) add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = append(c.ids, id)
}

// list returns the ids collected so far; the caller must not add any more.
func (c *createdIDs) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ids
}

// probeRun is a running probe; stop ends it.
type probeRun struct {
	rate     float64
	done     chan struct{}
	finished chan struct{}
	slots    chan struct{} // one per probe in flight
	inFlight sync.WaitGroup

	mu       sync.Mutex
	latency  []time.Duration
	errors   int
	skipped  int
	failures map[string]int
}

// probeReport is what a probe run measured.
type probeReport struct {
	RatePerSecond float64        `json:"rate_per_second"`
	Sent          int            `json:"sent"`
	Errors        int            `json:"errors"`
	Skipped       int            `json:"skipped"` // ticks with maxProbesInFlight already in flight
	LatencyMS     latencyMS      `json:"latency_ms"`
	Failures      map[string]int `json:"failures,omitempty"`
}

// latencyMS is a latency summary in milliseconds.
type latencyMS struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// start probes ids from the instant from until stop is called or ctx ends.
// The first probe goes out at from itself rather than one interval later,
// so a drain shorter than the interval is still measured.
func (p *apiProbe) start(ctx context.Context, ids []string, from time.Time) *probeRun {
	r := newProbeRun(p.rate)
	go func() {
		defer close(r.finished)
		defer r.inFlight.Wait()
		if len(ids) == 0 {
			return
		}
		wait := time.NewTimer(max(from.Sub(p.now()), 0))
		defer wait.Stop()
		select {
		case <-wait.C:
		case <-r.done:
			return
		case <-ctx.Done():
			return
		}
		tick := time.NewTicker(time.Duration(float64(time.Second) / p.rate))
		defer tick.Stop()
		for {
			r.launch(func() (time.Duration, error) { return p.get(ctx, ids[rand.IntN(len(ids))]) })
			select {
			case <-tick.C:
			case <-r.done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return r
}

func newProbeRun(rate float64) *probeRun {
	return &probeRun{rate: rate, done: make(chan struct{}), finished: make(chan struct{}),
		slots: make(chan struct{}, maxProbesInFlight), failures: map[string]int{}}
}

// launch runs one probe in its own goroutine, so a slow answer does not
// hold back the pace, or counts a skipped tick when too many are in flight.
func (r *probeRun) launch(probe func() (time.Duration, error)) {
	select {
	case r.slots <- struct{}{}:
	default:
		r.mu.Lock()
		r.skipped++
		r.mu.Unlock()
		return
	}
	r.inFlight.Go(func() {
		defer func() { <-r.slots }()
		d, err := probe()
		r.mu.Lock()
		defer r.mu.Unlock()
		r.latency = append(r.latency, d)
		if err != nil {
			r.errors++
			r.failures[err.Error()]++
		}
	})
}

// stop ends the run, waits for the probes in flight (each bounded by
// probeTimeout) and returns what was measured.
func (r *probeRun) stop() *probeReport {
	close(r.done)
	<-r.finished
	return r.report()
}

// report summarizes the probes that finished.
func (r *probeRun) report() *probeReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := summarize(r.latency)
	rep := &probeReport{RatePerSecond: r.rate, Sent: len(r.latency), Errors: r.errors, Skipped: r.skipped,
		LatencyMS: latencyMS{P50: ms(s.P50), P95: ms(s.P95), P99: ms(s.P99), Max: ms(s.Max)}}
	if len(r.failures) > 0 {
		rep.Failures = r.failures
	}
	return rep
}

// get sends one GET /events/{id} and returns the time to the whole answer;
// anything but 200 is an error.
func (p *apiProbe) get(ctx context.Context, id string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.server.JoinPath("events", id).String(), nil)
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	t0 := p.now()
	err = p.do(req)
	return p.now().Sub(t0), err
}

func (p *apiProbe) do(req *http.Request) error {
	resp, err := p.client.Do(req)
	if err != nil {
		return fmt.Errorf("get /events: %w", trimURLError(err))
	}
	defer func() { _ = resp.Body.Close() }()
	// Reading the body to the end times a usable answer and lets the
	// connection be reused.
	if _, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)); err != nil {
		return fmt.Errorf("read event: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}
