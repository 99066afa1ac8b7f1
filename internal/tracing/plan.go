package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// PlanSpanName names the span of an event's first planning.
const PlanSpanName = "qhronos.plan"

// StartPlan starts the span of a new event's first planning (inside the
// create request's span). End it with EndPlan.
func StartPlan(ctx context.Context, eventID string) (context.Context, trace.Span) {
	if !installed.Load() {
		return ctx, trace.SpanFromContext(ctx)
	}
	return tracer().Start(ctx, PlanSpanName, trace.WithAttributes(attribute.String("qhronos.event.id", eventID)))
}

// EndPlan records how many rows the plan made and the first one's instant,
// and ends the span.
func EndPlan(span trace.Span, rows int, first *time.Time, err error) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("qhronos.plan.rows", rows))
		if first != nil {
			span.SetAttributes(attribute.String("qhronos.plan.first_at", first.UTC().Format(time.RFC3339Nano)))
		}
		if err != nil {
			span.SetStatus(codes.Error, "planning failed") // the error text stays in the API answer
		}
	}
	span.End()
}
