// Package tracing is Qhronos's OpenTelemetry tracing: off unless the OTEL_*
// environment asks for it, then a span per API request, one for an event's
// first planning, and one per delivery attempt, exported over OTLP (HTTP or
// gRPC). Everything here records ids, route patterns, hosts and outcomes —
// never a URL path or query, a header, a body or a secret.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// scope names the instrumentation in exported spans.
const scope = "github.com/qhronos/qhronos"

// tracer is looked up through the global provider at each use, so a
// provider installed by Setup (or a test) takes effect everywhere; with
// none installed it is OpenTelemetry's no-op and spans cost next to nothing.
func tracer() trace.Tracer { return otel.Tracer(scope) }

// Provider is the installed tracer provider; nil when tracing is off.
type Provider struct {
	tp *sdktrace.TracerProvider
}

// Shutdown flushes the spans still buffered and stops the exporter. It is
// safe on a nil Provider.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	if err := p.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}

// Enabled reports whether env asks for traces. Tracing is off by default
// (unlike the SDK's own default of "otlp") so that an instance never dials
// a collector nobody configured: it is on when OTEL_TRACES_EXPORTER is
// "otlp", or when an OTLP endpoint is set and OTEL_TRACES_EXPORTER is not
// "none"; OTEL_SDK_DISABLED=true turns it off regardless.
func Enabled(env func(string) string) bool {
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(env("OTEL_TRACES_EXPORTER"))) {
	case "otlp":
		return true
	case "":
		return env("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	default:
		return false
	}
}

// Setup installs a global tracer provider exporting over OTLP when the
// environment enables tracing (see Enabled), and returns nil otherwise.
// The exporters read the standard variables themselves (endpoint, headers,
// timeout, TLS, compression); the SDK reads OTEL_TRACES_SAMPLER(_ARG),
// OTEL_BSP_* and OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES. The protocol
// is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL:
// http/protobuf (the default) or grpc.
func Setup(ctx context.Context, version string) (*Provider, error) {
	if !Enabled(os.Getenv) {
		return nil, nil
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: %q is not supported (http/protobuf or grpc)", protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("start the OTLP trace exporter: %w", err)
	}
	// Our defaults first; the environment's service name and attributes win.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "qhronos"),
			attribute.String("service.version", version)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(idGenerator{}))
	Install(tp)
	return &Provider{tp: tp}, nil
}

// Install makes tp the global provider with W3C trace-context propagation.
// Tests install a provider of their own with it (it needs idGenerator for
// the attempt spans' deterministic ids; see NewIDGenerator).
func Install(tp trace.TracerProvider) {
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	installed.Store(true)
}

// installed is set once a provider is: until then (tracing off) the hooks
// return at once, without even the no-op tracer's small cost.
var installed atomic.Bool

// NewIDGenerator returns the id generator the attempt spans need (random
// ids otherwise), for a provider built outside Setup.
func NewIDGenerator() sdktrace.IDGenerator { return idGenerator{} }
