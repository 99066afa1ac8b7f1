package client

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// EndpointsService manages endpoints: shared delivery targets with their
// own signing secret, limits, authentication and health, named by events'
// webhook and apicall actions (action.params.endpoint_id).
type EndpointsService struct{ c *Client }

// Create stores an endpoint (POST /endpoints). The answer's Secret is the
// signing secret, shown only here.
func (s *EndpointsService) Create(ctx context.Context, in EndpointInput) (*Endpoint, error) {
	r := newRequest(http.MethodPost, "/endpoints", nil)
	r.body = in
	var out Endpoint
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List reads one page of endpoints, newest first (GET /endpoints).
func (s *EndpointsService) List(ctx context.Context, p ListEndpointsParams) (*Page[Endpoint], error) {
	r := newRequest(http.MethodGet, "/endpoints", nil)
	r.query = encodeQuery(p)
	var list []Endpoint
	res, err := s.c.do(ctx, r, &list)
	if err != nil {
		return nil, err
	}
	return &Page[Endpoint]{Items: list, NextCursor: nextCursor(res.header.Get("Link"))}, nil
}

// All iterates over every endpoint matching p, page after page.
func (s *EndpointsService) All(ctx context.Context, p ListEndpointsParams) iter.Seq2[Endpoint, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[Endpoint], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		return s.List(ctx, p)
	})
}

// Get reads one endpoint with its state and recent health
// (GET /endpoints/{id}).
func (s *EndpointsService) Get(ctx context.Context, id string) (*Endpoint, error) {
	var out Endpoint
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/endpoints/"+pathID(id), nil), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update changes the members set in patch (PATCH /endpoints/{id}); the
// others keep their value. IfMatch makes it conditional.
func (s *EndpointsService) Update(ctx context.Context, id string, patch EndpointPatch, opts ...CallOption) (*Endpoint, error) {
	return s.patch(ctx, id, patch, opts)
}

// UpdateFields is Update with a body of raw members: a nil value clears an
// optional member (rate_limit, timeout, auth, circuit, description).
func (s *EndpointsService) UpdateFields(ctx context.Context, id string, fields map[string]any, opts ...CallOption) (*Endpoint, error) {
	return s.patch(ctx, id, fields, opts)
}

func (s *EndpointsService) patch(ctx context.Context, id string, body any, opts []CallOption) (*Endpoint, error) {
	r := newRequest(http.MethodPatch, "/endpoints/"+pathID(id), opts)
	r.body = body
	var out Endpoint
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete removes an endpoint no event names (DELETE /endpoints/{id}).
func (s *EndpointsService) Delete(ctx context.Context, id string, opts ...CallOption) error {
	_, err := s.c.do(ctx, newRequest(http.MethodDelete, "/endpoints/"+pathID(id), opts), nil)
	return err
}

// Enable makes an endpoint healthy again (POST /endpoints/{id}/enable); the
// answer's Resumed counts the occurrences resumed.
func (s *EndpointsService) Enable(ctx context.Context, id string) (*Endpoint, error) {
	return s.action(ctx, id, "enable", nil)
}

// Disable stops deliveries to an endpoint (POST /endpoints/{id}/disable):
// its due occurrences fail with reason endpoint_disabled.
func (s *EndpointsService) Disable(ctx context.Context, id string) (*Endpoint, error) {
	return s.action(ctx, id, "disable", nil)
}

// RotateSecret issues a new signing secret, in the answer's Secret; the old
// one keeps signing until grace ends (0: the server's default, 24 h).
func (s *EndpointsService) RotateSecret(ctx context.Context, id string, grace time.Duration) (*Endpoint, error) {
	body := RotateEndpointSecretJSONBody{}
	if grace > 0 {
		body.Grace = Ptr(grace.String())
	}
	return s.action(ctx, id, "rotate-secret", body)
}

// Test sends one signed test webhook to the endpoint now and reports what
// the receiver answered (POST /endpoints/{id}/test). A failed delivery is
// an answer with Delivered false, not an error; nothing is logged and the
// endpoint's circuit does not count it.
func (s *EndpointsService) Test(ctx context.Context, id string) (*EndpointTestResult, error) {
	var out EndpointTestResult
	r := newRequest(http.MethodPost, "/endpoints/"+pathID(id)+"/test", nil)
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (s *EndpointsService) action(ctx context.Context, id, name string, body any) (*Endpoint, error) {
	r := newRequest(http.MethodPost, "/endpoints/"+pathID(id)+"/"+name, nil)
	r.body = body
	var out Endpoint
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
