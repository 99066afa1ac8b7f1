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
	// dispatching, retrying, awaiting_ack).
	Waiting func(ctx context.Context) (map[string]int, error)
	// OpenCircuits counts the endpoints whose circuit is open.
	OpenCircuits func(ctx context.Context) (int, error)
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
		"Waiting occurrences by status (pending, dispatching, retrying, awaiting_ack), from the database.",
		[]string{"status"}, nil)
	openCircuitsDesc = prometheus.NewDesc("qhronos_endpoint_circuits_open",
		"Endpoints whose circuit is open (deliveries to them wait).", nil, nil)
)

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
}
