package tracing

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		assert.Equal(t, c.want, Enabled(func(k string) string { return c.env[k] }), "%v", c.env)
	}
}

// An attempt injects its own span as traceparent; an opted-out one injects
// nothing, and a retry links to the first attempt's derived span context.
func TestInjectOptOut(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithIDGenerator(NewIDGenerator())))
	ctx, span := StartAttempt(context.Background(), Attempt{OccurrenceID: "o1", Number: 1, Propagate: true})
	h := http.Header{}
	Inject(ctx, h)
	span.End()
	want := OccurrenceTrace("o1")
	assert.Equal(t, "00-"+want.TraceID().String()+"-"+want.SpanID().String()+"-01", h.Get("traceparent"))

	ctx, span = StartAttempt(context.Background(), Attempt{OccurrenceID: "o1", Number: 2, Propagate: false})
	h = http.Header{}
	Inject(ctx, h)
	span.End()
	assert.Empty(t, h.Get("traceparent"))
	ended := rec.Ended()
	assert.Len(t, ended, 2)
	assert.Equal(t, want.TraceID(), ended[1].SpanContext().TraceID(), "a retry stays in the occurrence's trace")
	assert.NotEqual(t, want.SpanID(), ended[1].SpanContext().SpanID())
	assert.Equal(t, want.SpanID(), ended[1].Links()[0].SpanContext.SpanID())
}

// Setup builds the exporter the protocol names (gRPC too) and refuses an
// unknown one by its variable's name; off, it installs nothing.
func TestSetupProtocols(t *testing.T) {
	ctx := context.Background()
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SDK_DISABLED"} {
		t.Setenv(k, "")
	}
	p, err := Setup(ctx, "test")
	assert.NoError(t, err)
	assert.Nil(t, p, "off without OTEL_* settings")
	assert.NoError(t, p.Shutdown(ctx), "a nil provider shuts down")

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	_, err = Setup(ctx, "test")
	assert.ErrorContains(t, err, "OTEL_EXPORTER_OTLP_PROTOCOL")

	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	p, err = Setup(ctx, "test")
	assert.NoError(t, err)
	assert.NotNil(t, p)
	assert.NoError(t, p.Shutdown(ctx), "nothing to flush")
}
