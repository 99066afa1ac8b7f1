package tracing

import (
	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Middleware starts a server span per API request, named by the method and
// the route pattern ("POST /events/:id/pause"), never the raw path (it holds
// ids) or the query. A caller's traceparent makes it a child of the caller's
// span. Nothing from headers or bodies is recorded. With tracing off it only
// calls the next handler.
//
// A small middleware rather than otelgin: it keeps the recorded attributes
// to the few listed here.
func Middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		if !installed.Load() {
			c.Next()
			return
		}
		route := c.FullPath()
		if route == "" {
			route = "unmatched"
		}
		ctx := otel.GetTextMapPropagator().Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
		ctx, span := tracer().Start(ctx, c.Request.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", c.Request.Method),
				attribute.String("http.route", route)))
		defer span.End()
		if !span.IsRecording() {
			c.Next()
			return
		}
		c.Request = c.Request.WithContext(ctx)
		c.Next()
		status := c.Writer.Status()
		span.SetAttributes(attribute.Int("http.response.status_code", status))
		if status >= 500 {
			span.SetStatus(codes.Error, "")
		}
	}
}
