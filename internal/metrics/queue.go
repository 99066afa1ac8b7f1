package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	dueDesc = prometheus.NewDesc("qhronos_due_backlog",
		"Occurrences pending whose instant has come (next_attempt_at <= now) and not yet claimed.", nil, nil)
	retryingDesc = prometheus.NewDesc("qhronos_retrying_occurrences",
		"Occurrences waiting for a retry.", nil, nil)
)

// queueCollector refreshes the backlog gauges from the database at scrape
// time, so every instance reports the same, current truth without a
// background poller. A failed or slow query omits the gauges (absent data,
// not a wrong zero) and counts an error.
type queueCollector struct {
	query   QueueFunc
	timeout time.Duration
	errors  prometheus.Counter
}

// Describe implements prometheus.Collector.
func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- dueDesc
	ch <- retryingDesc
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	due, retrying, err := c.query(ctx)
	// The error counter is collected here, after the query, so a scrape
	// reports its own failure.
	defer c.errors.Collect(ch)
	if err != nil {
		c.errors.Inc()
		return
	}
	ch <- prometheus.MustNewConstMetric(dueDesc, prometheus.GaugeValue, float64(due))
	ch <- prometheus.MustNewConstMetric(retryingDesc, prometheus.GaugeValue, float64(retrying))
}
