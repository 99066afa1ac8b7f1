package tracing

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// BenchmarkAttemptSpan is the tracing work one delivery attempt adds: its
// span (100 % sampled, batched to an exporter that drops it), the
// destination, the traceparent header and the outcome. With tracing off it
// is the global no-op's cost.
func BenchmarkAttemptSpan(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()),
				sdktrace.WithIDGenerator(NewIDGenerator()))
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			Install(tp)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				ctx, span := StartAttempt(context.Background(), Attempt{EventID: "e", OccurrenceID: strconv.Itoa(i),
					Number: 1 + i%2, ActionType: "webhook", Propagate: true})
				SetDestination(ctx, "127.0.0.1:8080")
				h := http.Header{}
				Inject(ctx, h)
				EndAttempt(span, "completed", 200, false)
			}
		})
	}
}
