package metrics

import "github.com/prometheus/client_golang/prometheus"

// Notices counts operator notices (internal/notify) by channel type, kind
// and outcome: sent, failed, dropped (queue full) or suppressed (sent less
// than min_interval ago). Both label sets are small and fixed.
type Notices struct {
	total *prometheus.CounterVec
}

// Notices registers the notice counter on m's registry; call it once.
func (m *Metrics) Notices() *Notices {
	n := &Notices{total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "qhronos_notifications_total",
		Help: "Operator notices by channel type (webhook, email; empty before a channel is chosen), kind and outcome " +
			"(sent, failed, dropped, suppressed).",
	}, []string{"channel", "kind", "outcome"})}
	m.reg.MustRegister(n.total)
	return n
}

// ObserveNotice implements notify.Observer.
func (n *Notices) ObserveNotice(channelType, kind, outcome string) {
	n.total.WithLabelValues(channelType, kind, outcome).Inc()
}
