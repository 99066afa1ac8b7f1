package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/endpoints"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/outbound"
)

// EndpointTester sends an endpoint's test delivery (endpoints.Runtime).
type EndpointTester interface {
	Test(ctx context.Context, id string, delivery actions.Delivery) (actions.Outcome, error)
}

// endpointTestJSON is the answer of POST /endpoints/{id}/test.
type endpointTestJSON struct {
	Delivered       bool    `json:"delivered"`
	StatusCode      *int    `json:"status_code"`
	DurationMS      int64   `json:"duration_ms"`
	Error           *string `json:"error"`
	ResponseExcerpt *string `json:"response_excerpt"`
	Truncated       bool    `json:"truncated"`
}

// testEndpoint sends one signed webhook to an endpoint the principal may
// write, now, and reports what the receiver answered. It goes through the
// webhook action like an attempt but is not one: no attempt is logged and
// the circuit, health and limits do not count it (endpoints.Runtime.Test).
func (s *Server) testEndpoint(c *gin.Context) error {
	ctx := c.Request.Context()
	// The scoped read answers 404 for an endpoint out of the principal's
	// reach, as every other endpoint route does.
	e, err := s.Events.GetEndpoint(ctx, principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	if kind := outbound.BrokerKind(e.URL); kind != "" {
		return &input.Error{Status: http.StatusBadRequest, Field: "id", Message: fmt.Sprintf(
			"endpoint %s is a %s broker endpoint: a test message needs a subject, exchange, topic or stream, "+
				"which only an event's action gives; test it with an event (POST /events/{id}/trigger)", e.ID, kind)}
	}
	if s.EndpointTests == nil {
		return &input.Error{Status: http.StatusServiceUnavailable, Message: "endpoint tests are not available on this server"}
	}
	params, _ := json.Marshal(map[string]string{"endpoint_id": e.ID})
	delivery, err := s.Actions.Prepare("webhook", params)
	if err != nil {
		return err
	}
	out, err := s.EndpointTests.Test(ctx, e.ID, delivery)
	if errors.Is(err, endpoints.ErrBrokerEndpoint) {
		return &input.Error{Status: http.StatusBadRequest, Field: "id", Message: "endpoint " + e.ID + " is a message broker endpoint"}
	}
	if err != nil {
		return err
	}
	res := endpointTestJSON{Delivered: out.Err == nil, DurationMS: out.Duration.Milliseconds(), Truncated: out.Truncated}
	if out.StatusCode != 0 {
		code := out.StatusCode
		res.StatusCode = &code
	}
	if out.Err != nil {
		// Errors name no URL (actions keeps it out), but an endpoint's
		// receiver may echo anything: the same redaction as other answers.
		msg := s.redact.String(out.Err.Error())
		res.Error = &msg
	}
	if out.Excerpt != "" {
		excerpt := out.Excerpt
		res.ResponseExcerpt = &excerpt
	}
	c.JSON(http.StatusOK, res)
	return nil
}
