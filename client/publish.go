package client

import (
	"errors"
	"strings"
)

// ErrPublishTo refuses an AMQP destination without the colon between the
// exchange and the routing key.
var ErrPublishTo = errors.New(`an AMQP destination is exchange:routing_key (":queue" for the default exchange)`)

// PublishParams are the params that name where a broker action publishes,
// from a destination written as one string, as `qhronos events create
// --to` and the console's event form take it: the NATS subject, the AMQP
// exchange:routing_key, the Kafka topic or the Redis stream; jetstream
// applies to NATS and recordKey (the record key, optional) to Kafka. The
// broker's url or endpoint_id is the caller's to add. ErrPublishTo for an
// AMQP destination without a colon; nil params for a type that is not a
// broker's.
func PublishParams(typ ActionType, to string, jetstream bool, recordKey string) (map[string]any, error) {
	params := map[string]any{}
	switch typ {
	case "nats":
		params["subject"] = to
		if jetstream {
			params["jetstream"] = true
		}
	case "amqp":
		exchange, routingKey, ok := strings.Cut(to, ":")
		if !ok {
			return nil, ErrPublishTo
		}
		params["exchange"], params["routing_key"] = exchange, routingKey
	case "kafka":
		params["topic"] = to
		if recordKey != "" {
			params["key"] = recordKey
		}
	case "redis_stream":
		params["stream"] = to
	default:
		return nil, nil
	}
	return params, nil
}
