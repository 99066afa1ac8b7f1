package endpoints

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
)

// ErrBrokerEndpoint is Test's answer for an endpoint whose URL is a message
// broker's: a broker message needs a subject, exchange, topic or stream,
// which only an event's action params give.
var ErrBrokerEndpoint = errors.New("endpoint is a message broker endpoint")

// TestName is the name a test delivery carries in its payload.
const TestName = "Qhronos test delivery"

// Test sends one test delivery to endpoint id now, through delivery (a
// webhook naming the endpoint) with the endpoint's URL, authentication,
// headers, signing secrets and timeout, exactly as an attempt would.
//
// It reads the endpoint fresh and leaves everything an attempt touches
// alone: no rate-limit token or concurrency slot is taken, the circuit and
// health do not count it, and the cache is not refreshed. A disabled or
// open endpoint is still sent to: operators test a receiver before
// enabling it again.
func (r *Runtime) Test(ctx context.Context, id string, delivery actions.Delivery) (actions.Outcome, error) {
	ep, err := r.cfg.Load(ctx, id)
	if err != nil {
		return actions.Outcome{}, fmt.Errorf("load endpoint %s: %w", id, err)
	}
	if ep.DeletedAt != nil {
		return actions.Outcome{}, fmt.Errorf("load endpoint %s: deleted: %w", id, model.ErrNotFound)
	}
	res, err := r.resolve(ep)
	if err != nil {
		// What an attempt would fail with too (a key that does not open
		// the secrets, a client certificate that does not parse): the
		// test's answer, not a server fault.
		return actions.Outcome{Err: err}, nil
	}
	if res.target.Broker != nil {
		return actions.Outcome{}, ErrBrokerEndpoint
	}
	now := r.cfg.Clock.Now()
	adm := &Admission{EndpointID: id}
	r.fill(adm, res, now)
	timeout := r.attemptTimeout(res)
	req := actions.Request{
		// The webhook-id names the test, never an occurrence: a receiver
		// deduplicating on it cannot confuse it with a real delivery.
		OccurrenceID: "test_" + uuid.NewString(), Attempt: 1, Manual: true,
		ScheduledAt: now.UTC(), DispatchedAt: now.UTC(), Name: TestName,
		Description: "Sent from POST /endpoints/{id}/test; no event or occurrence stands behind it.",
		Tags:        []string{}, Metadata: json.RawMessage(`{"qhronos_test":true}`),
		Secrets: adm.Secrets, Timeout: timeout, Target: adm.Target,
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return delivery.Execute(ctx, req), nil
}
