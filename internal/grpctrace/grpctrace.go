// Package grpctrace traces the gRPC calls between the host and its plugins
// with otelgrpc, but only calls that belong to a trace. otelgrpc's stats
// handlers start a span, build attributes and record a duration for every
// call, which costs a plugin call several microseconds on each side while
// tracing is off (issue 14: a call through the host within 1.15× of a bare
// go-plugin call). Gated, an untraced call pays one context lookup per
// event instead, and a traced one is exactly what otelgrpc makes of it.
// A process that set no global tracer provider or propagator cannot trace
// a call at all; there Configured says so and the handler is left out,
// which also spares gRPC its stats events (several microseconds a call).
package grpctrace

import (
	"context"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
)

// The global tracer provider and propagator as the process started, before
// anything set its own.
var (
	startProvider   = otel.GetTracerProvider()
	startPropagator = otel.GetTextMapPropagator()
)

// Configured reports whether this process has set a global tracer provider
// or propagator (telemetry.StartTracing sets both). Until then otelgrpc,
// which uses them, would record no span and send no trace context, so a
// connection made before needs no stats handler.
func Configured() bool {
	return otel.GetTracerProvider() != startProvider || otel.GetTextMapPropagator() != startPropagator
}

// Client is otelgrpc's client handler for the calls whose context carries
// a span (the engine's tool-call span while tracing is on): they get a
// client span and send its trace context to the plugin.
func Client(opts ...otelgrpc.Option) stats.Handler {
	return &gate{next: otelgrpc.NewClientHandler(opts...), traced: func(ctx context.Context) bool {
		return trace.SpanContextFromContext(ctx).IsValid()
	}}
}

// Server is otelgrpc's server handler for the calls that arrive with a
// W3C traceparent, so a plugin continues the host's trace; a call without
// one has no trace to continue.
func Server(opts ...otelgrpc.Option) stats.Handler {
	return &gate{next: otelgrpc.NewServerHandler(opts...), traced: func(ctx context.Context) bool {
		return len(metadata.ValueFromIncomingContext(ctx, "traceparent")) > 0
	}}
}

// gate passes a call's events to next only when traced said yes at its
// start; TagRPC marks such a call's context so HandleRPC can tell.
type gate struct {
	next   stats.Handler
	traced func(context.Context) bool
}

type tracedKey struct{}

func (g *gate) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	if !g.traced(ctx) {
		return ctx
	}
	return context.WithValue(g.next.TagRPC(ctx, info), tracedKey{}, true)
}

func (g *gate) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if ctx.Value(tracedKey{}) != nil {
		g.next.HandleRPC(ctx, s)
	}
}

func (g *gate) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	return g.next.TagConn(ctx, info)
}

func (g *gate) HandleConn(ctx context.Context, s stats.ConnStats) {
	g.next.HandleConn(ctx, s)
}
