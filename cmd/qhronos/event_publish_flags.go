package main

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/qhronos/qhronos/client"
)

// publishFlags build a broker action (nats, amqp, kafka, redis_stream) and
// the encryption of a webhook or broker payload.
type publishFlags struct {
	publish, to, recordKey, encryptTo string
	jetstream                         bool
}

func (p *publishFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&p.publish, "publish", "", "publish to a broker URL instead: nats://, amqp://, kafka:// or redis:// (or their TLS schemes tls://, amqps://, kafka+tls://, rediss://)")
	fs.StringVar(&p.to, "to", "", "with --publish: the NATS subject, the AMQP exchange:routing_key, the Kafka topic or the Redis stream")
	fs.StringVar(&p.recordKey, "record-key", "", "with a kafka:// --publish: the record key")
	fs.BoolVar(&p.jetstream, "jetstream", false, "with a nats:// --publish: publish through JetStream and wait for the stream's ack")
	fs.StringVar(&p.encryptTo, "encrypt-to", "", "file holding the receiver's public key as a JWK: every payload is sent as a JWE to it")
}

// brokerTypes maps URL schemes to action types.
var brokerTypes = map[string]string{"nats": "nats", "tls": "nats", "amqp": "amqp", "amqps": "amqp",
	"kafka": "kafka", "kafka+tls": "kafka", "redis": "redis_stream", "rediss": "redis_stream"}

// apply sets in.Action from the flags given, or adds encryption to the
// webhook/broker action already built.
func (p *publishFlags) apply(cmd *cobra.Command, in *client.EventInput, webhook *string) error {
	set := cmd.Flags().Changed
	if set("publish") {
		scheme, _, _ := strings.Cut(p.publish, "://")
		typ := brokerTypes[strings.ToLower(scheme)]
		if typ == "" {
			return usagef("--publish: a broker URL (nats://, amqp://, kafka://, redis:// …)")
		}
		if p.to == "" {
			return usagef("--to: required with --publish")
		}
		params, err := client.PublishParams(client.ActionType(typ), p.to, p.jetstream, p.recordKey)
		if err != nil {
			return usagef("--to: exchange:routing_key for amqp (an empty exchange is the default one: ':queue')")
		}
		params["url"] = p.publish
		in.Action = &client.Action{Type: client.ActionType(typ), Params: params}
	} else {
		for _, name := range []string{"to", "record-key", "jetstream"} {
			if set(name) {
				return usagef("--%s: only with --publish", name)
			}
		}
	}
	if set("encrypt-to") {
		raw, err := os.ReadFile(p.encryptTo)
		if err != nil {
			return usagef("--encrypt-to: %v", err)
		}
		if !json.Valid(raw) {
			return usagef("--encrypt-to: not a JWK (JSON)")
		}
		if webhook != nil && in.Action == nil {
			in.Action = &client.Action{Type: client.ActionTypeWebhook, Params: map[string]any{"url": *webhook}}
			in.Webhook = nil
		}
		if in.Action == nil || in.Action.Type == client.ActionTypeWebsocket || in.Action.Type == client.ActionTypeApicall {
			return usagef("--encrypt-to: only with --webhook, --publish or a webhook/broker --action")
		}
		if in.Action.Params == nil {
			in.Action.Params = map[string]any{}
		}
		in.Action.Params["encryption_jwk"] = json.RawMessage(raw)
	}
	return nil
}
