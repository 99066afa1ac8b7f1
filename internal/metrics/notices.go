package metrics

import "github.com/prometheus/client_golang/prometheus"

// Notices counts operator notices (internal/notify) by channel type, kind
// and outcome: sent, failed, dropped (queue full) or suppressed (sent less
// than min_interval ago). Both label sets are small and fixed.
type Notices struct {
	total *prometheus.CounterVec
}

// Notices registers the notice counter on m's registry; call it once. The
// sent and failed series of each channel type and kind start at zero.
func (m *Metrics) Notices(kinds ...string) *Notices {
	n := &Notices{total: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "qhronos_notifications_total",
		Help: "Operator notices by channel type (webhook, email; empty before a channel is chosen), kind and outcome " +
			"(sent, failed, dropped, suppressed).",
	}, []string{"channel", "kind", "outcome"})}
	m.reg.MustRegister(n.total)
	for _, channel := range []string{"webhook", "email"} {
		for _, kind := range kinds {
			n.total.WithLabelValues(channel, kind, "sent")
			n.total.WithLabelValues(channel, kind, "failed")
		}
	}
	return n
}

// ObserveNotice implements notify.Observer.
func (n *Notices) ObserveNotice(channelType, kind, outcome string) {
	n.total.WithLabelValues(channelType, kind, outcome).Inc()
}
