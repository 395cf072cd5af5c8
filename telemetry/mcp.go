package telemetry

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mark3labs/mcp-go/tracing"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ordo-run/ordo/internal/tracemeta"
)

// MCP semantic-convention attributes (not yet in otel's semconv package).
const (
	attrMCPMethod   = attribute.Key("mcp.method.name")
	attrMCPSession  = attribute.Key("mcp.session.id")
	attrMCPProtocol = attribute.Key("mcp.protocol.version")
)

// MCPOptions observe every request an mcp-go server serves, through
// mcp-go's tracing hooks: a server span named after the method ("other"
// for one MCP does not define; "tools/call execute" for a tool call, with
// gen_ai.tool.name), failed when the answer is an error or a tool result
// with isError; its parent is the trace context in the request's _meta
// (traceparent) or HTTP headers; and ordo_mcp_requests_total and
// ordo_mcp_request_duration_seconds by method.
func (m *Metrics) MCPOptions() []server.ServerOption {
	return []server.ServerOption{
		server.WithTracer(mcpTracer{m}),
		server.WithPropagator(headerPropagator{}),
		server.WithMetaPropagator(metaPropagator{}),
	}
}

// mcpMethods are the methods counted by name; any other is "other", so a
// client cannot mint series.
var mcpMethods = map[string]bool{}

func init() {
	for _, m := range []mcp.MCPMethod{mcp.MethodInitialize, mcp.MethodPing, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList,
		mcp.MethodResourcesRead, mcp.MethodResourcesSubscribe, mcp.MethodResourcesUnsubscribe, mcp.MethodPromptsList, mcp.MethodPromptsGet,
		mcp.MethodToolsList, mcp.MethodToolsCall, mcp.MethodSetLogLevel, mcp.MethodTasksGet, mcp.MethodTasksList, mcp.MethodTasksResult,
		mcp.MethodTasksCancel, mcp.MethodNotificationInitialized, mcp.MethodNotificationCancelled, mcp.MethodNotificationProgress,
		mcp.MethodCompletionComplete, mcp.MethodServerDiscover, mcp.MethodSubscriptionsListen} {
		mcpMethods[string(m)] = true
	}
}

type mcpTracer struct{ m *Metrics }

// Start opens the request's server span. mcp-go also asks for an internal
// span around each tool handler; the server span already covers it (and
// takes its attributes and status), so that one is not made.
func (t mcpTracer) Start(ctx context.Context, name string, kind tracing.SpanKind, attrs ...tracing.Attribute) (context.Context, tracing.Span) {
	method, ok := strings.CutPrefix(name, "mcp.")
	if kind != tracing.SpanKindServer || !ok {
		return tracing.NoopTracer().Start(ctx, name, kind)
	}
	label := method
	if !mcpMethods[method] {
		label = "other"
	}
	kv := []attribute.KeyValue{attrMCPMethod.String(label)}
	for _, a := range attrs {
		switch a.Key {
		case "mcp.session.id":
			kv = append(kv, attrMCPSession.String(a.Value))
		case "mcp.protocol.version":
			kv = append(kv, attrMCPProtocol.String(a.Value))
		}
	}
	// An unknown method is named "other" in the span too: its name is the
	// client's text, which would mint span names without bound.
	ctx, span := tracer.Start(ctx, label, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(kv...))
	s := &mcpSpan{span: span, m: t.m, label: label, start: time.Now()}
	return tracing.ContextWithSpan(ctx, s), s
}

// mcpSpan is one request's span and its metrics.
type mcpSpan struct {
	span   trace.Span
	m      *Metrics
	label  string // the method, or "other" (mcpMethods)
	start  time.Time
	failed atomic.Bool
}

func (s *mcpSpan) SetAttributes(attrs ...tracing.Attribute) {
	for _, a := range attrs {
		if a.Key == "mcp.tool.name" {
			s.span.SetName(s.label + " " + a.Value)
			s.span.SetAttributes(semconv.GenAIToolNameKey.String(a.Value))
		}
	}
}

func (s *mcpSpan) RecordError(err error) { s.span.RecordError(err) }

func (s *mcpSpan) SetStatus(code tracing.StatusCode, description string) {
	if code == tracing.StatusError {
		s.failed.Store(true)
		if s.label == "other" { // "Method NAME not found": the client's text again
			description = "method not found"
		}
		s.span.SetStatus(codes.Error, description)
	}
}

func (s *mcpSpan) End() {
	res := "ok"
	if s.failed.Load() {
		res = "error"
	}
	s.m.mcpRequests.WithLabelValues(s.label, res).Inc()
	s.m.mcpSeconds.WithLabelValues(s.label).Observe(time.Since(s.start).Seconds())
	s.span.End()
}

// headerPropagator reads and writes trace context in HTTP headers with
// otel's global propagator (a no-op while tracing is off).
type headerPropagator struct{}

func (headerPropagator) Inject(ctx context.Context, h http.Header) {
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
}

func (headerPropagator) Extract(ctx context.Context, h http.Header) context.Context {
	return otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(h))
}

// metaPropagator reads and writes trace context in a request's _meta.
type metaPropagator struct{}

func (metaPropagator) InjectMeta(ctx context.Context, meta *mcp.Meta) *mcp.Meta {
	return tracemeta.Inject(ctx, meta)
}

func (metaPropagator) ExtractMeta(ctx context.Context, meta *mcp.Meta) context.Context {
	return tracemeta.Extract(ctx, meta)
}
