package actions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/outbound"
)

// ErrEndpointNotResolved is the (retryable) failure of an endpoint delivery
// run without a Request.Target: the dispatcher did not resolve its endpoint.
var ErrEndpointNotResolved = errors.New("endpoint not resolved")

// destinationParam checks that params name exactly one destination, an
// inline url or an endpoint_id, and returns the endpoint id in canonical
// form ("" for an inline url, which is checked against the outbound policy).
// An endpoint's URL is checked when the endpoint is written, and at dial
// time like any other.
func destinationParam(rawURL, endpointID string, opts outbound.Options) (string, error) {
	switch {
	case endpointID == "" && rawURL == "":
		return "", &ParamError{Param: "url", Reason: "is required (or endpoint_id)"}
	case endpointID != "" && rawURL != "":
		return "", &ParamError{Param: "endpoint_id", Reason: "not allowed with url (give one of them)"}
	case endpointID != "":
		// Only the canonical 36-character form: uuid.Parse also takes
		// braces and urn: prefixes, which would not match stored ids.
		id, err := uuid.Parse(endpointID)
		if err != nil || len(endpointID) != 36 {
			return "", &ParamError{Param: "endpoint_id", Reason: "must be a UUID"}
		}
		return id.String(), nil
	default:
		return "", validateURL("url", rawURL, opts)
	}
}

// httpTarget is where one attempt of an HTTP action goes.
type httpTarget struct {
	url    string
	client *http.Client
	// headers are an endpoint's, set before the action's own.
	headers map[string]string
	// shownURL keeps url as recorded when url is the action's own (nil
	// for an endpoint's, resolved per attempt).
	shownURL *atomic.Pointer[string]
}

// httpSender is a prepared webhook or apicall, able to send to any target.
type httpSender interface {
	send(ctx context.Context, req Request, to httpTarget) Outcome
}

// endpointDelivery is a webhook or apicall naming an endpoint: each attempt
// goes where the dispatcher resolved the endpoint (Request.Target), with its
// client (authentication), headers and secrets.
type endpointDelivery struct {
	endpointID string
	sender     httpSender
	// client sends when the Target carries none.
	client *http.Client
}

var _ EndpointDelivery = (*endpointDelivery)(nil)

// EndpointID implements EndpointDelivery.
func (d *endpointDelivery) EndpointID() string { return d.endpointID }

// Destination implements Delivery: "" — the dispatcher limits by the
// endpoint it resolves, not by a host of ours.
func (d *endpointDelivery) Destination() string { return "" }

// AckTimeout implements Delivery: HTTP deliveries never wait for an ack.
func (d *endpointDelivery) AckTimeout() time.Duration { return 0 }

// Execute implements Delivery.
func (d *endpointDelivery) Execute(ctx context.Context, req Request) Outcome {
	t := req.Target
	if t == nil || t.URL == "" {
		return Outcome{Err: ErrEndpointNotResolved, Retryable: true}
	}
	// Another endpoint's target would carry its secrets and credentials to
	// the wrong receiver: refuse it.
	if t.EndpointID != "" && !strings.EqualFold(t.EndpointID, d.endpointID) {
		return Outcome{Err: fmt.Errorf("%w: target is endpoint %s, want %s", ErrEndpointNotResolved, t.EndpointID, d.endpointID), Retryable: true}
	}
	if t.Broker != nil {
		return Outcome{Err: fmt.Errorf("endpoint %s is a message broker endpoint: deliver to it with action type %s",
			d.endpointID, outbound.BrokerKind(t.URL))}
	}
	client := t.Client
	if client == nil {
		client = d.client
	}
	return d.sender.send(ctx, req, httpTarget{url: t.URL, client: client, headers: t.Headers})
}

// setEndpointHeaders adds an endpoint's headers to h, leaving out those that
// would break the request's framing or lie about what Qhronos sets
// (signatures, Idempotency-Key): the endpoint API refuses them, and this
// keeps a stored one from reaching the wire.
func setEndpointHeaders(h http.Header, headers map[string]string) {
	for k, v := range headers {
		canon := http.CanonicalHeaderKey(k)
		if forbiddenHeaders[canon] || reservedHeaders[canon] || strings.HasPrefix(canon, "Proxy-") {
			continue
		}
		h.Set(k, v)
	}
}
