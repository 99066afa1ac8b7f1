// Package metrics exposes Qhronos's Prometheus metrics: deliveries, attempt
// duration and firing lateness, the due and retrying backlog, claims,
// expansion and archival runs, HTTP requests, WebSocket connections and
// rate-limit rejections. A Metrics value owns its registry (no global
// state), so tests and several servers in one process never collide.
package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/qhronos/qhronos/internal/model"
)

// QueueFunc counts occurrences due now and retrying; it is called at scrape
// time (e.g. repository.Store.QueueDepth with the deployment clock).
type QueueFunc func(ctx context.Context) (due, retrying int, err error)

// Options are the callbacks and tunables of New.
type Options struct {
	// Queue refreshes the backlog gauges at scrape time; nil leaves them out.
	Queue QueueFunc
	// QueueTimeout bounds Queue so a slow database never hangs a scrape
	// (default 2 s).
	QueueTimeout time.Duration
	// WebSocketConnections reports open WebSocket connections; nil leaves
	// the gauge out.
	WebSocketConnections func() int
	// DroppedFrames counts WebSocket frames that did not reach other
	// instances (bus away or queue full); nil leaves the counter out.
	DroppedFrames func() uint64
	// EndpointIDs get their own series in the per-endpoint metrics
	// (metrics.endpoint_ids); the others are counted as "other".
	EndpointIDs []string
	// ActionTypes are the registered action types: their delivery,
	// attempt-duration and lateness series start at zero, so rates and
	// alerts work from the first scrape instead of seeing absent data.
	ActionTypes []string
}

// Metrics holds every collector and the registry that exposes them.
type Metrics struct {
	reg *prometheus.Registry

	deliveries      *prometheus.CounterVec
	ended           *prometheus.CounterVec
	attemptDuration *prometheus.HistogramVec
	lateness        *prometheus.HistogramVec
	claimBatch      prometheus.Histogram
	expansions      *prometheus.CounterVec
	expansionTime   prometheus.Histogram
	archivals       *prometheus.CounterVec
	archivalTime    prometheus.Histogram
	archivedRows    *prometheus.CounterVec
	httpRequests    *prometheus.CounterVec
	httpDuration    *prometheus.HistogramVec
	rateLimited     prometheus.Counter
	queueErrors     prometheus.Counter
	endpoints       *endpointMetrics
}

// latenessBuckets reach from a millisecond to an hour: firing late by
// seconds is a symptom, by minutes an incident.
var latenessBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600}

// New builds the collectors and registers them, with the Go runtime and
// process collectors, on a fresh registry.
func New(opts Options) *Metrics {
	if opts.QueueTimeout <= 0 {
		opts.QueueTimeout = 2 * time.Second
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "qhronos_deliveries_total",
			Help: "Delivery attempts by action type and outcome (success, retryable_failure, failure, awaiting_ack).",
		}, []string{"action", "outcome"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "qhronos_occurrences_ended_total",
			Help: "Due instants that did not fire, by terminal status (skipped, missed, cancelled) and reason " +
				"(manual, calendar, paused, dst_gap, overlap, catch_up_window, catch_up_policy, event_deleted, rule_changed).",
		}, []string{"status", "reason"}),
		attemptDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "qhronos_attempt_duration_seconds",
			Help:    "Duration of delivery attempts by action type.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"action"}),
		lateness: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "qhronos_firing_lateness_seconds",
			Help:    "How late attempts started after their scheduled instant, by action type.",
			Buckets: latenessBuckets,
		}, []string{"action"}),
		claimBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "qhronos_claim_batch_size",
			Help:    "Occurrences leased per dispatcher claim.",
			Buckets: []float64{0, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000},
		}),
		expansions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "qhronos_expander_runs_total",
			Help: "Expander runs by result (ok, error).",
		}, []string{"result"}),
		expansionTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "qhronos_expander_run_duration_seconds",
			Help:    "Duration of expander runs.",
			Buckets: prometheus.DefBuckets,
		}),
		archivals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "qhronos_archiver_runs_total",
			Help: "Archiver runs by result (ok, error).",
		}, []string{"result"}),
		archivalTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "qhronos_archiver_run_duration_seconds",
			Help:    "Duration of archiver runs.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300},
		}),
		archivedRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "qhronos_archived_rows_total",
			Help: "Rows the archiver moved (or deleted) out of the live tables, and purged from the archive.",
		}, []string{"kind"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "qhronos_http_requests_total",
			Help: "HTTP requests by method, route pattern and status code.",
		}, []string{"method", "route", "status"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "qhronos_http_request_duration_seconds",
			Help:    "HTTP request duration by method and route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "qhronos_rate_limit_rejections_total",
			Help: "Requests answered 429 by the rate limiter.",
		}),
		queueErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "qhronos_queue_scrape_errors_total",
			Help: "Scrapes whose backlog query failed or timed out (the backlog gauges are then absent).",
		}),
	}
	for _, result := range []string{"ok", "error"} {
		m.expansions.WithLabelValues(result)
		m.archivals.WithLabelValues(result)
	}
	for _, a := range opts.ActionTypes {
		for _, outcome := range []string{"success", "retryable_failure", "failure", "awaiting_ack"} {
			m.deliveries.WithLabelValues(a, outcome)
		}
		m.attemptDuration.WithLabelValues(a)
		m.lateness.WithLabelValues(a)
	}
	m.endpoints = newEndpointMetrics(opts.EndpointIDs)
	m.reg.MustRegister(m.endpoints.collectors()...)
	m.reg.MustRegister(m.deliveries, m.ended, m.attemptDuration, m.lateness, m.claimBatch, m.expansions, m.expansionTime,
		m.archivals, m.archivalTime, m.archivedRows, m.httpRequests, m.httpDuration, m.rateLimited,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if opts.Queue != nil {
		m.reg.MustRegister(&queueCollector{query: opts.Queue, timeout: opts.QueueTimeout, errors: m.queueErrors})
	}
	if opts.WebSocketConnections != nil {
		conns := opts.WebSocketConnections
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "qhronos_websocket_connections",
			Help: "Open WebSocket client connections on this instance.",
		}, func() float64 { return float64(conns()) }))
	}
	if opts.DroppedFrames != nil {
		dropped := opts.DroppedFrames
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "qhronos_websocket_frames_dropped_total",
			Help: "WebSocket frames not published to other instances because the bus was away or its queue full.",
		}, func() float64 { return float64(dropped()) }))
	}
	return m
}

// Registry exposes the registry, e.g. to add collectors of other packages.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveDelivery records one delivery attempt: its outcome and how long it
// took.
func (m *Metrics) ObserveDelivery(actionType, outcome string, duration time.Duration) {
	m.deliveries.WithLabelValues(actionType, outcome).Inc()
	m.attemptDuration.WithLabelValues(actionType).Observe(duration.Seconds())
}

// ObserveLateness records how late an occurrence's first, scheduled attempt
// started after its instant. Retries (which wait for their backoff) and
// manual attempts (triggers and replays, which fire when asked) are not
// firing lateness and are not observed, as GET /stats leaves them out.
func (m *Metrics) ObserveLateness(actionType string, lateness time.Duration) {
	m.lateness.WithLabelValues(actionType).Observe(max(lateness, 0).Seconds())
}

// ObserveClaim records the size of one dispatcher claim.
func (m *Metrics) ObserveClaim(n int) { m.claimBatch.Observe(float64(n)) }

// ObserveEnded counts n due instants that ended without firing in status
// for reason (the ledger; see scheduler.Ledger).
func (m *Metrics) ObserveEnded(status model.OccurrenceStatus, reason string, n int) {
	if n > 0 && reason != "" {
		m.ended.WithLabelValues(string(status), reason).Add(float64(n))
	}
}

// ObserveExpansion records one expander run.
func (m *Metrics) ObserveExpansion(d time.Duration, err error) {
	m.expansions.WithLabelValues(result(err)).Inc()
	m.expansionTime.Observe(d.Seconds())
}

// ObserveArchival records one archiver run: rows moved (or deleted) out of
// the live tables and rows purged from the archive.
func (m *Metrics) ObserveArchival(d time.Duration, moved, purged int, err error) {
	m.archivals.WithLabelValues(result(err)).Inc()
	m.archivalTime.Observe(d.Seconds())
	m.archivedRows.WithLabelValues("moved").Add(float64(moved))
	m.archivedRows.WithLabelValues("purged").Add(float64(purged))
}

// RateLimited counts one request rejected by the rate limiter.
func (m *Metrics) RateLimited() { m.rateLimited.Inc() }

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
