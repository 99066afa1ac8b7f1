package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// SchedulesService is /schedules.
type SchedulesService struct{ c *Client }

// Preview lists the next instants of a rule without creating anything
// (POST /schedules/preview).
func (s *SchedulesService) Preview(ctx context.Context, in PreviewRequest) (*Preview, error) {
	r := newRequest(http.MethodPost, "/schedules/preview", nil)
	r.body = in
	r.idempotent = true // it changes nothing
	var out Preview
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Health reports whether the process is alive (GET /health; /healthz is
// its alias).
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var out Health
	if _, err := c.do(ctx, newRequest(http.MethodGet, "/health", nil), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Ready reports whether the database (and Redis) answer (GET /ready). A
// server that is not ready answers 503 with the same body: Ready returns it
// together with the *APIError.
func (c *Client) Ready(ctx context.Context) (*Ready, error) {
	var out Ready
	_, err := c.do(ctx, newRequest(http.MethodGet, "/ready", nil), &out)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusServiceUnavailable &&
		json.Unmarshal(apiErr.Body, &out) == nil && out.Status != "" {
		return &out, err
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Status reports the instance's state, without secrets (GET /status).
func (c *Client) Status(ctx context.Context) (*Status, error) {
	var out Status
	if _, err := c.do(ctx, newRequest(http.MethodGet, "/status", nil), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Stats reports counts, durations and lateness over a window (GET /stats).
func (c *Client) Stats(ctx context.Context, p StatsParams) (*Stats, error) {
	r := newRequest(http.MethodGet, "/stats", nil)
	r.query = encodeQuery(p)
	var out Stats
	if _, err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// StatsTimeline reports attempts per time bucket and the lateness of first
// attempts (GET /stats/timeline).
func (c *Client) StatsTimeline(ctx context.Context, p StatsTimelineParams) (*Timeline, error) {
	r := newRequest(http.MethodGet, "/stats/timeline", nil)
	r.query = encodeQuery(p)
	var out Timeline
	if _, err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Punctuality reports, per event, endpoint or tag, how the instants of a
// window went: due, on time or late against a tolerance, missed, skipped,
// failed, lateness percentiles and success ratio (GET /stats/punctuality).
func (c *Client) Punctuality(ctx context.Context, p PunctualityParams) (*PunctualityReport, error) {
	r := newRequest(http.MethodGet, "/stats/punctuality", nil)
	r.query = encodeQuery(p)
	var out PunctualityReport
	if _, err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Counts is the group's figures without its key and name.
func (g PunctualityGroup) Counts() PunctualityCounts {
	return PunctualityCounts{Due: g.Due, OnTime: g.OnTime, Late: g.Late, Missed: g.Missed, Skipped: g.Skipped,
		Cancelled: g.Cancelled, Completed: g.Completed, Failed: g.Failed, Pending: g.Pending, LatenessMs: g.LatenessMs,
		SuccessRatio: g.SuccessRatio, OnTimeRatio: g.OnTimeRatio}
}

// OpenAPI returns the server's OpenAPI document (GET /openapi.json).
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	var raw []byte
	if _, err := c.do(ctx, newRequest(http.MethodGet, "/openapi.json", nil), &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Metrics returns the Prometheus text exposition (GET /metrics); the
// client's token is sent, as metrics.token requires when set.
func (c *Client) Metrics(ctx context.Context) (string, error) {
	var raw []byte
	if _, err := c.do(ctx, newRequest(http.MethodGet, "/metrics", nil), &raw); err != nil {
		return "", err
	}
	return string(raw), nil
}
