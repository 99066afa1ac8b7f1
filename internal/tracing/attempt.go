package tracing

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// AttemptSpanName names every delivery attempt's span.
const AttemptSpanName = "qhronos.attempt"

// Attempt identifies one delivery attempt.
type Attempt struct {
	EventID      string
	OccurrenceID string
	Number       int // 1-based
	ActionType   string
	// Propagate sends traceparent to the receiver (the event's
	// trace_propagation, true unless opted out).
	Propagate bool
}

// OccurrenceTrace is the span context of an occurrence's first attempt.
//
// Every attempt of an occurrence is a span in one trace whose id is derived
// from the occurrence id, and the first attempt's span id is derived too.
// Retries are new spans in that trace, linked to this span context. Deriving
// instead of storing means no schema change and no write on the hot path,
// and a retry run by another instance (after a restart or a lease handover)
// links to the same first attempt without reading anything. The cost: an
// attempt that runs twice under the same number (a lost lease) yields two
// spans with the same id, which backends show as one span with two reports.
func OccurrenceTrace(occurrenceID string) trace.SpanContext {
	sum := sha256.Sum256([]byte("qhronos/occurrence/" + occurrenceID))
	var tid trace.TraceID
	var sid trace.SpanID
	copy(tid[:], sum[:16])
	copy(sid[:], sum[16:24])
	if !tid.IsValid() || !sid.IsValid() { // a zero half of a hash: never in practice
		tid[15], sid[7] = 1, 1
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid,
		TraceFlags: trace.FlagsSampled, Remote: true})
}

// StartAttempt starts the attempt's span as the root of its occurrence's
// trace; the context carries it to the action (see Inject). Retries link to
// the first attempt's span context. End it with EndAttempt.
func StartAttempt(ctx context.Context, a Attempt) (context.Context, trace.Span) {
	if !installed.Load() {
		return ctx, trace.SpanFromContext(ctx) // the no-op span of a context without one
	}
	first := OccurrenceTrace(a.OccurrenceID)
	opts := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("qhronos.event.id", a.EventID),
			attribute.String("qhronos.occurrence.id", a.OccurrenceID),
			attribute.Int("qhronos.attempt", a.Number),
			attribute.String("qhronos.action.type", a.ActionType))}
	ids := wantIDs{trace: first.TraceID()}
	if a.Number <= 1 {
		ids.span = first.SpanID()
	} else {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: first,
			Attributes: []attribute.KeyValue{attribute.String("qhronos.link", "first_attempt")}}))
	}
	ctx, span := tracer().Start(context.WithValue(ctx, idsKey{}, ids), AttemptSpanName, opts...)
	ctx = context.WithValue(ctx, idsKey{}, wantIDs{}) // for this span only
	if !a.Propagate {
		ctx = context.WithValue(ctx, noPropagationKey{}, true)
	}
	return ctx, span
}

// SetDestination records the host an attempt sends to; dest is host:port
// (or a bare host). Only the host is kept: never a path, query or port-less
// URL text.
func SetDestination(ctx context.Context, dest string) {
	span := trace.SpanFromContext(ctx)
	if dest == "" || !span.IsRecording() { // untraced: nothing to split or box, every delivery
		return
	}
	host, _, err := net.SplitHostPort(dest)
	if err != nil {
		host = dest
	}
	span.SetAttributes(attribute.String("server.address", host))
}

// EndAttempt records the attempt's outcome and ends its span. The error
// text is left out (a receiver's error may echo what it was sent); the
// outcome and status code say what happened.
func EndAttempt(span trace.Span, outcome string, statusCode int, failed bool) {
	if !span.IsRecording() {
		span.End()
		return
	}
	span.SetAttributes(attribute.String("qhronos.outcome", outcome))
	if statusCode != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", statusCode))
	}
	if failed {
		span.SetStatus(codes.Error, outcome)
	}
	span.End()
}

// Inject adds traceparent (and tracestate) for the attempt in ctx to an
// outgoing request's headers, unless the event opted out or a header of
// that name is already set (an api_call's own headers win).
func Inject(ctx context.Context, h http.Header) {
	if ctx.Value(noPropagationKey{}) != nil || h.Get("traceparent") != "" {
		return
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
}

type noPropagationKey struct{}

type idsKey struct{}

// wantIDs are the ids the next span started with the context should take;
// zero halves are drawn at random.
type wantIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// idGenerator is the SDK's id source: random ids, except for the ids an
// attempt span asks for through its context (OccurrenceTrace). The SDK's
// own random generator is not exported, hence this one.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	want, _ := ctx.Value(idsKey{}).(wantIDs)
	tid, sid := want.trace, want.span
	if !tid.IsValid() {
		tid = randomTraceID()
	}
	if !sid.IsValid() {
		sid = randomSpanID()
	}
	return tid, sid
}

func (idGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return randomSpanID() }

func randomTraceID() trace.TraceID {
	var t trace.TraceID
	for !t.IsValid() {
		binary.BigEndian.PutUint64(t[:8], rand.Uint64())
		binary.BigEndian.PutUint64(t[8:], rand.Uint64())
	}
	return t
}

func randomSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.BigEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}
