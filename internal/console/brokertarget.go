package console

import (
	"fmt"
	"strings"
)

// brokerTarget describes a broker action's destination in words: the kind,
// where it goes inside the broker (subject, exchange and routing key,
// topic, stream) and the broker, by its URL or its endpoint. ok is false
// for other action types. URLs arrive from the API with their userinfo and
// query values already fingerprinted, so they are shown as they are.
func brokerTarget(typ string, params map[string]any) (text string, ok bool) {
	p := func(name string) string {
		s, _ := params[name].(string)
		return s
	}
	var where string
	switch typ {
	case "nats":
		where = "subject " + orDash(p("subject"))
		if js, _ := params["jetstream"].(bool); js {
			where += " (JetStream)"
		}
	case "amqp":
		exchange := "(default)"
		if s, present := params["exchange"].(string); present && s != "" {
			exchange = s
		}
		where = fmt.Sprintf("exchange %s, routing key %s", exchange, orDash(p("routing_key")))
	case "kafka":
		where = "topic " + orDash(p("topic"))
		if k := p("key"); k != "" {
			where += ", key " + k
		}
	case "redis_stream":
		where = "stream " + orDash(p("stream"))
	default:
		return "", false
	}
	var to string
	switch {
	case p("endpoint_id") != "":
		to = " at endpoint " + p("endpoint_id")
	case p("url") != "":
		to = " at " + p("url")
	}
	return typ + " → " + where + to, true
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return s
}
