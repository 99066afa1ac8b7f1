package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one Qhronos server. It is safe for concurrent use.
type Client struct {
	base       *url.URL
	token      string
	http       *http.Client
	wsHTTP     *http.Client // Subscribe's, when set apart from http
	userAgent  string
	maxRetries int
	backoff    time.Duration
	maxWait    time.Duration
	via        string

	Events      *EventsService
	Occurrences *OccurrencesService
	Calendars   *CalendarsService
	Endpoints   *EndpointsService
	Schedules   *SchedulesService
	Tokens      *TokensService
	// Topics is /topics, the catalogue of what can fire; Subscriptions is
	// /subscriptions, the endpoints subscribed to them.
	Topics        *TopicsService
	Subscriptions *SubscriptionsService
	// NotificationChannels is /notification-channels (admin).
	NotificationChannels *NotificationChannelsService
	// ConcurrencyKeys is /concurrency-keys: the limits events share by key.
	ConcurrencyKeys *ConcurrencyKeysService
	// PortalLinks is /portal-links: one-time links to the portal.
	PortalLinks *PortalLinksService
}

// Option configures a Client.
type Option func(*Client)

// WithToken authenticates every call with the master token or a JWT.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithHTTPClient replaces the HTTP client (default: 30 s timeout).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithWebSocketHTTPClient sets the HTTP client Subscribe opens /ws with
// (default: the client's HTTP client). Use it when the calls and the
// WebSocket take different routes: a transport that answers calls without
// a connection of its own (an in-process one, a recorder in tests) cannot
// upgrade to a WebSocket, so Subscribe gets a client whose transport dials
// a real (or piped) connection. Its Timeout is ignored, as the default's
// is: an overall timeout would cut a long-lived connection.
func WithWebSocketHTTPClient(h *http.Client) Option { return func(c *Client) { c.wsHTTP = h } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithVia names the tool making every call (X-Qhronos-Via: cli, console,
// …): the server records it as an event's created_via and as the channel of
// each change in the event's history. A call's own Via option wins.
func WithVia(name string) Option { return func(c *Client) { c.via = name } }

// WithRetries sets how many times an idempotent call is retried (default 2;
// 0 disables retries).
func WithRetries(n int) Option { return func(c *Client) { c.maxRetries = max(n, 0) } }

// WithBackoff sets the first retry delay (default 250 ms, doubling, with
// jitter) and the longest delay the client waits, including a Retry-After
// (default 30 s); a longer Retry-After is returned as the error instead.
func WithBackoff(first, longest time.Duration) Option {
	return func(c *Client) { c.backoff, c.maxWait = first, longest }
}

// New returns a client of the server at baseURL (http or https, optionally
// with a path prefix).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server: %q is not an http(s) URL", baseURL)
	}
	c := &Client{base: u, http: &http.Client{Timeout: 30 * time.Second}, userAgent: "qhronos-go",
		maxRetries: 2, backoff: 250 * time.Millisecond, maxWait: 30 * time.Second}
	for _, o := range opts {
		o(c)
	}
	c.Events = &EventsService{c}
	c.Occurrences = &OccurrencesService{c}
	c.Schedules = &SchedulesService{c}
	c.Tokens = &TokensService{c}
	c.Calendars = &CalendarsService{c}
	c.NotificationChannels = &NotificationChannelsService{c}
	c.Topics, c.Subscriptions = &TopicsService{c}, &SubscriptionsService{c}
	c.Endpoints = &EndpointsService{c}
	c.ConcurrencyKeys = &ConcurrencyKeysService{c}
	c.PortalLinks = &PortalLinksService{c}
	return c, nil
}

// BaseURL is the server's URL as given to New.
func (c *Client) BaseURL() string { return c.base.String() }

// CallOption sets a header of one call.
type CallOption func(h http.Header)

// IdempotencyKey makes a create or trigger safe to repeat: the same key and
// body replay the first answer for 24 h.
func IdempotencyKey(key string) CallOption {
	return func(h http.Header) { h.Set("Idempotency-Key", key) }
}

// IfMatch makes an update or delete conditional on the event's ETag (412
// when it changed).
func IfMatch(etag string) CallOption { return func(h http.Header) { h.Set("If-Match", etag) } }

// Via names the tool making this call: an event's created_via on a create,
// the channel of the change in the event's history.
func Via(name string) CallOption { return func(h http.Header) { h.Set("X-Qhronos-Via", name) } }

// Ptr returns a pointer to v, for the optional fields of the generated types.
func Ptr[T any](v T) *T { return &v }

// request is one call.
type request struct {
	method string
	path   string
	query  url.Values
	body   any
	header http.Header
	// idempotent allows retries beyond a 429.
	idempotent bool
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
}

func newRequest(method, path string, opts []CallOption) *request {
	r := &request{method: method, path: path, header: http.Header{},
		idempotent: method == http.MethodGet || method == http.MethodPut || method == http.MethodDelete}
	for _, o := range opts {
		o(r.header)
	}
	if r.header.Get("Idempotency-Key") != "" {
		r.idempotent = true
	}
	return r
}

// ensureIdempotencyKey gives a POST that may be retried a key, so a retry
// never acts twice. With retries off the request goes without one (the
// server then skips its idempotency bookkeeping).
func (r *request) ensureIdempotencyKey(c *Client) {
	if r.header.Get("Idempotency-Key") == "" {
		if c.maxRetries == 0 {
			return
		}
		b := make([]byte, 16)
		_, _ = crand.Read(b)
		r.header.Set("Idempotency-Key", "qhronos-go-"+hex.EncodeToString(b))
	}
	r.idempotent = true
}

// do sends r, retrying what is safe to retry, and decodes a 2xx answer's
// JSON into out (unless out is nil).
func (c *Client) do(ctx context.Context, r *request, out any) (*response, error) {
	var body []byte
	if r.body != nil {
		var err error
		if body, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("encode request body: %w", err)
		}
	}
	for attempt := 0; ; attempt++ {
		res, err := c.once(ctx, r, body, out)
		if err == nil {
			return res, nil
		}
		wait, retry := c.retryable(r, err, attempt)
		if !retry {
			return res, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, err
		case <-t.C:
		}
	}
}

// retryable decides whether a failed attempt is tried again, and when.
func (c *Client) retryable(r *request, err error, attempt int) (time.Duration, bool) {
	if attempt >= c.maxRetries {
		return 0, false
	}
	wait := c.backoff << attempt
	wait = wait/2 + rand.N(wait/2+1)
	var apiErr *APIError
	switch {
	case errors.As(err, &apiErr):
		switch apiErr.StatusCode {
		case http.StatusTooManyRequests:
			// Refused before it was handled: safe whatever the method.
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			if !r.idempotent {
				return 0, false
			}
		default:
			return 0, false
		}
		if apiErr.RetryAfter > 0 {
			wait = apiErr.RetryAfter
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return 0, false
	case !r.idempotent:
		return 0, false
	}
	return wait, wait <= c.maxWait
}

func (c *Client) once(ctx context.Context, r *request, body []byte, out any) (*response, error) {
	u := *c.base
	u.Path = strings.TrimRight(c.base.Path, "/") + r.path
	u.RawQuery = r.query.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if c.via != "" && req.Header.Get("X-Qhronos-Via") == "" {
		req.Header.Set("X-Qhronos-Via", c.via)
	}
	// A call's own credentials (RunToken) win over the client's token.
	if c.token != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	defer resp.Body.Close()
	res := &response{status: resp.StatusCode, header: resp.Header}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return res, fmt.Errorf("%s %s: read answer: %w", r.method, r.path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return res, decodeError(resp, data)
	}
	if out != nil && len(data) > 0 {
		if raw, ok := out.(*[]byte); ok {
			*raw = data
			return res, nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return res, fmt.Errorf("%s %s: decode answer: %w", r.method, r.path, err)
		}
	}
	return res, nil
}

func decodeError(resp *http.Response, data []byte) error {
	e := &APIError{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-ID"), Body: data[:min(len(data), 64<<10)]}
	var body struct {
		Error string `json:"error"`
		Field string `json:"field"`
	}
	if json.Unmarshal(data, &body) == nil {
		e.Message, e.Field = body.Error, body.Field
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}

// pathID escapes one path segment.
func pathID(id string) string { return url.PathEscape(id) }
