package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// otherEndpoints is the endpoint label of every endpoint not asked for by
// id (metrics.endpoint_ids): the series stay bounded however many
// endpoints exist.
const otherEndpoints = "other"

// endpointMetrics are the per-endpoint collectors.
type endpointMetrics struct {
	labelled map[string]bool // endpoint ids with their own series
	attempts *prometheus.CounterVec
	duration *prometheus.HistogramVec
	waits    *prometheus.CounterVec
}

func newEndpointMetrics(ids []string) *endpointMetrics {
	labelled := make(map[string]bool, len(ids))
	for _, id := range ids {
		labelled[id] = true
	}
	e := &endpointMetrics{
		labelled: labelled,
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "qhronos_endpoint_attempts_total",
			Help: "Attempts to endpoints by endpoint (its id when listed in metrics.endpoint_ids, else \"other\") and result (ok, error).",
		}, []string{"endpoint", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "qhronos_endpoint_attempt_duration_seconds",
			Help:    "Duration of attempts to endpoints, by endpoint (id when listed in metrics.endpoint_ids, else \"other\").",
			Buckets: prometheus.DefBuckets,
		}, []string{"endpoint"}),
		waits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "qhronos_endpoint_waits_total",
			Help: "Attempts held back by their endpoint, uncounted, by reason (rate_limit, concurrency, circuit_open).",
		}, []string{"reason"}),
	}
	// Series start at zero (see Options.ActionTypes).
	for _, id := range append([]string{otherEndpoints}, ids...) {
		e.attempts.WithLabelValues(id, "ok")
		e.attempts.WithLabelValues(id, "error")
		e.duration.WithLabelValues(id)
	}
	for _, reason := range []string{"rate_limit", "concurrency", "circuit_open"} {
		e.waits.WithLabelValues(reason)
	}
	return e
}

func (e *endpointMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{e.attempts, e.duration, e.waits}
}

// ObserveEndpointAttempt counts one attempt to an endpoint.
func (m *Metrics) ObserveEndpointAttempt(endpointID string, ok bool, d time.Duration) {
	label := otherEndpoints
	if m.endpoints.labelled[endpointID] {
		label = endpointID
	}
	result := "ok"
	if !ok {
		result = "error"
	}
	m.endpoints.attempts.WithLabelValues(label, result).Inc()
	m.endpoints.duration.WithLabelValues(label).Observe(d.Seconds())
}

// ObserveEndpointWait counts an attempt its endpoint held back.
func (m *Metrics) ObserveEndpointWait(reason string) {
	m.endpoints.waits.WithLabelValues(reason).Inc()
}
