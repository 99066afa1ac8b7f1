package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/metrics"
)

// scrape fetches the exposition through the handler and parses it with the
// Prometheus text parser.
func scrape(t *testing.T, h http.Handler, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, "scrape: %s", rec.Body)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	require.NoError(t, err)
	return families
}

// value returns the value of the series of family name whose labels include
// want; ok is false when there is none.
func value(families map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := families[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestDeliveryCountersMoveAfterObserveDelivery(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{})
	h := m.Handler("")
	before := scrape(t, h, "")
	if _, ok := value(before, "qhronos_deliveries_total", map[string]string{"action": "webhook"}); ok {
		t.Fatalf("no delivery series before any attempt")
	}
	m.ObserveDelivery("webhook", "completed", 120*time.Millisecond)
	m.ObserveLateness("webhook", 3*time.Millisecond)
	m.ObserveDelivery("webhook", "completed", 80*time.Millisecond)
	m.ObserveLateness("webhook", time.Second)
	m.ObserveDelivery("webhook", "retrying", 30*time.Second)
	m.ObserveDelivery("apicall", "failed", time.Second)
	m.ObserveLateness("apicall", -time.Millisecond)
	after := scrape(t, h, "")

	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"qhronos_deliveries_total", map[string]string{"action": "webhook", "outcome": "completed"}, 2},
		{"qhronos_deliveries_total", map[string]string{"action": "webhook", "outcome": "retrying"}, 1},
		{"qhronos_deliveries_total", map[string]string{"action": "apicall", "outcome": "failed"}, 1},
		{"qhronos_attempt_duration_seconds", map[string]string{"action": "webhook"}, 3},
		{"qhronos_firing_lateness_seconds", map[string]string{"action": "apicall"}, 1},
	}
	for _, tt := range tests {
		got, ok := value(after, tt.name, tt.labels)
		if !ok || got != tt.want {
			t.Errorf("%s%v: got %v (present %v), want %v", tt.name, tt.labels, got, ok, tt.want)
		}
	}
	sum := after["qhronos_firing_lateness_seconds"].GetMetric()
	for _, s := range sum {
		if s.GetHistogram().GetSampleSum() < 0 {
			t.Errorf("negative lateness observed: %v", s.GetHistogram().GetSampleSum())
		}
	}
}

func TestOtherObservations(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{WebSocketConnections: func() int { return 7 }})
	m.ObserveClaim(25)
	m.ObserveExpansion(time.Second, nil)
	m.ObserveExpansion(time.Second, errors.New("boom"))
	m.ObserveArchival(time.Second, 40, 3, nil)
	m.RateLimited()
	m.RateLimited()
	got := scrape(t, m.Handler(""), "")
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"qhronos_claim_batch_size", nil, 1},
		{"qhronos_expander_runs_total", map[string]string{"result": "ok"}, 1},
		{"qhronos_expander_runs_total", map[string]string{"result": "error"}, 1},
		{"qhronos_expander_run_duration_seconds", nil, 2},
		{"qhronos_archiver_runs_total", map[string]string{"result": "ok"}, 1},
		{"qhronos_archived_rows_total", map[string]string{"kind": "moved"}, 40},
		{"qhronos_archived_rows_total", map[string]string{"kind": "purged"}, 3},
		{"qhronos_rate_limit_rejections_total", nil, 2},
		{"qhronos_websocket_connections", nil, 7},
	}
	for _, tt := range tests {
		if v, ok := value(got, tt.name, tt.labels); !ok || v != tt.want {
			t.Errorf("%s%v: got %v (present %v), want %v", tt.name, tt.labels, v, ok, tt.want)
		}
	}
}

func TestQueueGaugesAreReadAtScrapeTime(t *testing.T) {
	t.Parallel()
	due, retrying := 3, 1
	var fail error
	m := metrics.New(metrics.Options{QueueTimeout: time.Second,
		Queue: func(ctx context.Context) (int, int, error) {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("the backlog query runs without a deadline")
			}
			return due, retrying, fail
		}})
	h := m.Handler("")
	got := scrape(t, h, "")
	if v, _ := value(got, "qhronos_due_backlog", nil); v != 3 {
		t.Errorf("due backlog: got %v, want 3", v)
	}
	due = 10
	got = scrape(t, h, "")
	if v, _ := value(got, "qhronos_due_backlog", nil); v != 10 {
		t.Errorf("due backlog after change: got %v, want 10", v)
	}
	if v, _ := value(got, "qhronos_retrying_occurrences", nil); v != 1 {
		t.Errorf("retrying: got %v, want 1", v)
	}
	fail = errors.New("database away")
	got = scrape(t, h, "")
	if _, ok := value(got, "qhronos_due_backlog", nil); ok {
		t.Error("a failed backlog query must not report a value")
	}
	if v, _ := value(got, "qhronos_queue_scrape_errors_total", nil); v != 1 {
		t.Errorf("scrape errors: got %v, want 1", v)
	}
}

func TestHTTPMiddlewareCountsRoutePatterns(t *testing.T) {
	t.Parallel()
	gin.SetMode(gin.TestMode)
	m := metrics.New(metrics.Options{})
	r := gin.New()
	r.Use(m.HTTPMiddleware())
	r.GET("/events/:id", func(c *gin.Context) { c.Status(http.StatusOK) })
	r.POST("/events", func(c *gin.Context) { c.Status(http.StatusCreated) })
	srv := httptest.NewServer(r)
	defer srv.Close()
	for _, req := range []struct{ method, path string }{
		{"GET", "/events/1"}, {"GET", "/events/2"}, {"POST", "/events"}, {"GET", "/no/such/thing"}, {"BREW", "/events"},
	} {
		hr, err := http.NewRequest(req.method, srv.URL+req.path, nil)
		require.NoError(t, err)
		res, err := srv.Client().Do(hr)
		require.NoError(t, err)
		_ = res.Body.Close()
	}
	got := scrape(t, m.Handler(""), "")
	tests := []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"method": "GET", "route": "/events/:id", "status": "200"}, 2},
		{map[string]string{"method": "POST", "route": "/events", "status": "201"}, 1},
		{map[string]string{"method": "GET", "route": "unmatched", "status": "404"}, 1},
		{map[string]string{"method": "other", "route": "unmatched"}, 1},
	}
	for _, tt := range tests {
		if v, ok := value(got, "qhronos_http_requests_total", tt.labels); !ok || v != tt.want {
			t.Errorf("http requests %v: got %v (present %v), want %v", tt.labels, v, ok, tt.want)
		}
	}
	for _, s := range got["qhronos_http_requests_total"].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "route" && (l.GetValue() == "/events/1" || l.GetValue() == "/no/such/thing") {
				t.Errorf("raw path %q became a label value", l.GetValue())
			}
		}
	}
}

func TestHandlerRequiresTheToken(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{})
	h := m.Handler("s3cret-token")
	tests := []struct {
		name   string
		header string
		want   int
	}{
		{"no header", "", http.StatusUnauthorized},
		{"wrong token", "Bearer nope", http.StatusUnauthorized},
		{"prefix of the token", "Bearer s3cret", http.StatusUnauthorized},
		{"basic auth", "Basic czNjcmV0LXRva2Vu", http.StatusUnauthorized},
		{"right token", "Bearer s3cret-token", http.StatusOK},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if tt.header != "" {
			req.Header.Set("Authorization", tt.header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s: got status %d, want %d", tt.name, rec.Code, tt.want)
		}
		if tt.want == http.StatusUnauthorized {
			require.JSONEq(t, `{"error":"metrics: a valid bearer token is required"}`, rec.Body.String())
			require.NotContains(t, rec.Body.String(), "qhronos_", "no figures leak")
		}
	}
	fams := scrape(t, h, "s3cret-token")
	require.Contains(t, fams, "go_goroutines", "runtime metrics are exposed")
}

// Only the endpoints asked for by id get their own series; every other one
// is counted as "other", however many there are.
func TestEndpointSeriesStayBounded(t *testing.T) {
	t.Parallel()
	const watched = "0b8f6d0e-1111-4a2b-9c3d-000000000001"
	m := metrics.New(metrics.Options{EndpointIDs: []string{watched}})
	m.ObserveEndpointAttempt(watched, true, 10*time.Millisecond)
	m.ObserveEndpointAttempt(watched, false, 20*time.Millisecond)
	for i := range 50 {
		m.ObserveEndpointAttempt(fmt.Sprintf("0b8f6d0e-2222-4a2b-9c3d-%012d", i), true, time.Millisecond)
	}
	m.ObserveEndpointWait("rate_limit")
	m.ObserveEndpointWait("circuit_open")
	m.ObserveEndpointWait("circuit_open")
	got := scrape(t, m.Handler(""), "")
	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"qhronos_endpoint_attempts_total", map[string]string{"endpoint": watched, "result": "ok"}, 1},
		{"qhronos_endpoint_attempts_total", map[string]string{"endpoint": watched, "result": "error"}, 1},
		{"qhronos_endpoint_attempts_total", map[string]string{"endpoint": "other", "result": "ok"}, 50},
		{"qhronos_endpoint_attempt_duration_seconds", map[string]string{"endpoint": "other"}, 50},
		{"qhronos_endpoint_waits_total", map[string]string{"reason": "circuit_open"}, 2},
		{"qhronos_endpoint_waits_total", map[string]string{"reason": "rate_limit"}, 1},
	}
	for _, tt := range tests {
		if v, ok := value(got, tt.name, tt.labels); !ok || v != tt.want {
			t.Errorf("%s%v: got %v (present %v), want %v", tt.name, tt.labels, v, ok, tt.want)
		}
	}
	if n := len(got["qhronos_endpoint_attempts_total"].GetMetric()); n != 4 {
		t.Errorf("attempt series: got %d, want 4 (two results each for the watched endpoint and other, zeros included)", n)
	}
}
