package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HealthOptions are the scrape-time probes of RegisterHealth: what /status
// reports, as metrics, so dashboards and alerts see the same truth. A nil
// probe leaves its metric out.
type HealthOptions struct {
	// Database pings the store.
	Database func(ctx context.Context) error
	// Redis pings the coordination backend; nil when coordination is in-process.
	Redis func(ctx context.Context) error
	// Loops reports each background loop as /status does: a map per loop
	// whose "healthy" is false when its last run failed or it is overdue.
	Loops func() map[string]any
	// Waiting counts the waiting occurrences by status (pending,
	// dispatching, retrying, awaiting_ack, running).
	Waiting func(ctx context.Context) (map[string]int, error)
	// OpenCircuits counts the endpoints whose circuit is open.
	OpenCircuits func(ctx context.Context) (int, error)
	// Workers reports what the dispatch workers hold (scheduler's fair
	// share).
	Workers func() Workers
	// Timeout bounds the probes of one scrape together (default 2 s).
	Timeout time.Duration
}

var (
	dependencyUpDesc = prometheus.NewDesc("qhronos_dependency_up",
		"1 when the dependency (database, redis) answered this scrape's ping, else 0.", []string{"dependency"}, nil)
	loopHealthyDesc = prometheus.NewDesc("qhronos_loop_healthy",
		"1 when the background loop's last run succeeded and it is not overdue (as /status reports), else 0.",
		[]string{"loop"}, nil)
	waitingDesc = prometheus.NewDesc("qhronos_occurrences_waiting",
		"Waiting occurrences by status (pending, dispatching, retrying, awaiting_ack, running), from the database.",
		[]string{"status"}, nil)
	openCircuitsDesc = prometheus.NewDesc("qhronos_endpoint_circuits_open",
		"Endpoints whose circuit is open (deliveries to them wait).", nil, nil)
	workersBusyDesc = prometheus.NewDesc("qhronos_dispatch_workers_busy",
		"Dispatch workers running an attempt on this instance.", nil, nil)
	destinationWorkersDesc = prometheus.NewDesc("qhronos_dispatch_destination_workers",
		"Dispatch workers held per destination host:port (only destinations holding one; at most "+
			"scheduler.destination_share of the pool each).", []string{"destination"}, nil)
	largestScopeDesc = prometheus.NewDesc("qhronos_dispatch_largest_scope_workers",
		"Most dispatch workers one tenant scope holds (scheduler.scope_share of the pool, up to three quarters while it borrows idle ones; scopes are not named).",
		nil, nil)
	oldestAttemptDesc = prometheus.NewDesc("qhronos_dispatch_oldest_attempt_seconds",
		"Age of the oldest attempt running on this instance (0 when none runs).", nil, nil)
	stuckDestinationsDesc = prometheus.NewDesc("qhronos_dispatch_destinations_stuck",
		"Destinations holding workers none of whose attempts ended for 5 s, or with an attempt past its deadline.",
		nil, nil)
)

// Workers is what the dispatch workers hold at scrape time.
type Workers struct {
	Busy, LargestScope, StuckDestinations int
	OldestAttempt                         time.Duration
	ByDestination                         map[string]int
}

// RegisterHealth adds the health collector to m's registry; call it once,
// when the probes' sources exist.
func (m *Metrics) RegisterHealth(o HealthOptions) {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	m.reg.MustRegister(&healthCollector{o})
}

type healthCollector struct{ o HealthOptions }

// Describe implements prometheus.Collector.
func (c *healthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- dependencyUpDesc
	ch <- loopHealthyDesc
	ch <- waitingDesc
	ch <- openCircuitsDesc
	ch <- workersBusyDesc
	ch <- destinationWorkersDesc
	ch <- largestScopeDesc
	ch <- oldestAttemptDesc
	ch <- stuckDestinationsDesc
}

// Collect implements prometheus.Collector. A database query that fails
// leaves its gauges absent (no wrong zero); qhronos_dependency_up says why.
func (c *healthCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.o.Timeout)
	defer cancel()
	up := func(name string, ping func(context.Context) error) {
		v := 1.0
		if ping(ctx) != nil {
			v = 0
		}
		ch <- prometheus.MustNewConstMetric(dependencyUpDesc, prometheus.GaugeValue, v, name)
	}
	if c.o.Database != nil {
		up("database", c.o.Database)
	}
	if c.o.Redis != nil {
		up("redis", c.o.Redis)
	}
	if c.o.Loops != nil {
		for name, v := range c.o.Loops() {
			healthy := 1.0
			if s, ok := v.(map[string]any); ok && s["healthy"] == false {
				healthy = 0
			}
			ch <- prometheus.MustNewConstMetric(loopHealthyDesc, prometheus.GaugeValue, healthy, name)
		}
	}
	if c.o.Waiting != nil {
		if counts, err := c.o.Waiting(ctx); err == nil {
			for status, n := range counts {
				ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(n), status)
			}
		}
	}
	if c.o.OpenCircuits != nil {
		if n, err := c.o.OpenCircuits(ctx); err == nil {
			ch <- prometheus.MustNewConstMetric(openCircuitsDesc, prometheus.GaugeValue, float64(n))
		}
	}
	if c.o.Workers != nil {
		collectWorkers(ch, c.o.Workers())
	}
}

func collectWorkers(ch chan<- prometheus.Metric, w Workers) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(workersBusyDesc, float64(w.Busy))
	gauge(largestScopeDesc, float64(w.LargestScope))
	gauge(oldestAttemptDesc, w.OldestAttempt.Seconds())
	gauge(stuckDestinationsDesc, float64(w.StuckDestinations))
	for dest, n := range w.ByDestination {
		gauge(destinationWorkersDesc, float64(n), dest)
	}
}
