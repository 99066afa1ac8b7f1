package tracing_test

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/internal/tracing"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }

// collector is a real OTLP/HTTP trace receiver on loopback: it decodes each
// ExportTraceServiceRequest and keeps the raw bytes too, to search them for
// secrets.
type collector struct {
	URL string

	mu    sync.Mutex
	raw   [][]byte
	spans []*tracepb.Span
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil || r.URL.Path != "/v1/traces" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.raw = append(c.raw, b)
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				c.spans = append(c.spans, ss.Spans...)
			}
		}
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

func (c *collector) snapshot() ([]*tracepb.Span, []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*tracepb.Span(nil), c.spans...), bytes.Join(c.raw, nil)
}

// env turns tracing on toward the collector, flushing spans quickly.
func (c *collector) env() []string {
	return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + c.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_SERVICE_NAME=qhronos-test"}
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = v.IntValue
		case *commonpb.AnyValue_BoolValue:
			out[kv.Key] = v.BoolValue
		}
	}
	return out
}

func byName(spans []*tracepb.Span, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// TestTracesExported runs the server with tracing on against a collector
// started here: the API request, the first planning and each attempt are
// spans, the retry links to the first attempt, the receiver's traceparent
// joins the attempt's trace, and no secret reaches any exported byte.
func TestTracesExported(t *testing.T) {
	col := newCollector(t)
	srv := qhronostest.Start(t, qhronostest.SQLite, col.env()...)
	rc := qhronostest.NewReceiver(t)
	var mu sync.Mutex
	calls := 0
	rc.Answer(func(qhronostest.Request) int {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return http.StatusServiceUnavailable // the first attempt fails: a retry follows
		}
		return http.StatusOK
	})
	const queryToken = "querytoken0d1e2f3a4b5c6d7e8f90"
	eventSecret := "evsecret" + qhronostest.RandomHex(t, 16)
	var created struct {
		ID string `json:"id"`
	}
	require.Equal(t, http.StatusCreated, srv.Call(t, http.MethodPost, "/events", map[string]any{
		"name": "traced", "start_time": time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano),
		"hmac_secret": eventSecret,
		"action":      map[string]any{"type": "webhook", "params": map[string]any{"url": rc.URL + "?token=" + queryToken}},
	}, &created))
	require.NotEmpty(t, created.ID)
	require.Equal(t, http.StatusOK, srv.Call(t, http.MethodGet, "/events/"+created.ID, nil, nil))
	// An event that opted out: its deliveries carry no traceparent.
	quiet := qhronostest.NewReceiver(t)
	var optedOut struct {
		ID               string `json:"id"`
		TracePropagation bool   `json:"trace_propagation"`
	}
	require.Equal(t, http.StatusCreated, srv.Call(t, http.MethodPost, "/events", map[string]any{
		"name": "untraced", "start_time": time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano),
		"webhook": quiet.URL, "trace_propagation": false,
	}, &optedOut))
	require.Equal(t, http.StatusOK, srv.Call(t, http.MethodGet, "/events/"+optedOut.ID, nil, &optedOut))
	assert.False(t, optedOut.TracePropagation)
	qhronostest.Wait(t, 60*time.Second, "two deliveries", func() bool { return len(rc.Requests()) >= 2 })
	qhronostest.Wait(t, 60*time.Second, "the opted-out delivery", func() bool { return len(quiet.Requests()) >= 1 })
	// Stopping drains the attempt in flight and flushes the exporter.
	srv.Stop()

	spans, raw := col.snapshot()
	names := map[string]bool{}
	for _, s := range spans {
		names[s.Name] = true
	}
	assert.True(t, names["POST /events"], "API span named by route: %v", names)
	assert.True(t, names["GET /events/:id"], "route pattern, not the raw path: %v", names)
	for n := range names {
		assert.NotContains(t, n, created.ID, "a span name holds an id")
		assert.NotContains(t, n, "?", "a span name holds a query")
	}

	plan := byName(spans, tracing.PlanSpanName)
	require.Len(t, plan, 2, "one per created event")
	if attrs(plan[0].Attributes)["qhronos.event.id"] != created.ID {
		plan[0] = plan[1]
	}
	var parent *tracepb.Span
	for _, p := range byName(spans, "POST /events") {
		if bytes.Equal(p.SpanId, plan[0].ParentSpanId) {
			parent = p
		}
	}
	require.NotNil(t, parent, "the planning runs inside the create request")
	assert.Equal(t, parent.TraceId, plan[0].TraceId)
	assert.Equal(t, created.ID, attrs(plan[0].Attributes)["qhronos.event.id"])
	assert.EqualValues(t, 1, attrs(plan[0].Attributes)["qhronos.plan.rows"])

	var atts []*tracepb.Span
	for _, s := range byName(spans, tracing.AttemptSpanName) {
		if attrs(s.Attributes)["qhronos.event.id"] == created.ID {
			atts = append(atts, s)
		}
	}
	require.Len(t, atts, 2, "attempt spans")
	first, second := atts[0], atts[1]
	if attrs(first.Attributes)["qhronos.attempt"] != int64(1) {
		first, second = second, first
	}
	want := tracing.OccurrenceTrace(attrs(first.Attributes)["qhronos.occurrence.id"].(string))
	for i, s := range []*tracepb.Span{first, second} {
		a := attrs(s.Attributes)
		assert.Equal(t, created.ID, a["qhronos.event.id"])
		assert.EqualValues(t, i+1, a["qhronos.attempt"])
		assert.Equal(t, "webhook", a["qhronos.action.type"])
		assert.Equal(t, "127.0.0.1", a["server.address"], "the destination host only")
		assert.Equal(t, want.TraceID().String(), hex.EncodeToString(s.TraceId), "one trace per occurrence")
		assert.Empty(t, s.ParentSpanId)
	}
	assert.Equal(t, want.SpanID().String(), hex.EncodeToString(first.SpanId))
	assert.EqualValues(t, 503, attrs(first.Attributes)["http.response.status_code"])
	assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, first.Status.GetCode())
	assert.EqualValues(t, 200, attrs(second.Attributes)["http.response.status_code"])
	require.Len(t, second.Links, 1, "the retry links to the first attempt")
	assert.Equal(t, first.TraceId, second.Links[0].TraceId)
	assert.Equal(t, first.SpanId, second.Links[0].SpanId)

	// Each delivery carried a traceparent naming its attempt's span.
	reqs := rc.Requests()
	require.Len(t, reqs, 2)
	for i, s := range []*tracepb.Span{first, second} {
		tp := reqs[i].Header.Get("traceparent")
		assert.Equal(t, "00-"+hex.EncodeToString(s.TraceId)+"-"+hex.EncodeToString(s.SpanId)+"-01", tp,
			"delivery %d joins attempt %d's trace", i+1, i+1)
	}

	for _, r := range quiet.Requests() {
		assert.Empty(t, r.Header.Get("traceparent"), "an opted-out event's delivery carried traceparent")
	}

	for _, secret := range []string{queryToken, srv.Token, eventSecret, srv.DefaultSecret, "/hooks", "token="} {
		assert.False(t, bytes.Contains(raw, []byte(secret)), "%q reached the exporter", secret)
	}
	assert.False(t, strings.Contains(string(raw), "Bearer"), "an Authorization header reached the exporter")
}
