package receiver

import "net/http"

// MessageHeader turns the headers of a message Qhronos published to a
// broker (NATS headers, AMQP headers, Kafka record headers, Redis stream
// entry fields) into an http.Header, so Verify and Open read them as they
// read a webhook's. Names match in any case.
func MessageHeader(headers map[string]string) http.Header {
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	return h
}

// VerifyMessage checks a broker message: its headers (webhook-id,
// webhook-timestamp, webhook-signature …) and its body, exactly as
// received.
func (v *Verifier) VerifyMessage(headers map[string]string, body []byte) error {
	return v.Verify(MessageHeader(headers), body)
}
