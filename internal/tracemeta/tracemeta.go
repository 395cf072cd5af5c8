// Package tracemeta carries W3C trace context (traceparent, tracestate) in
// an MCP request's _meta, which every transport carries, stdio included:
// Ordo's MCP server reads it (the parent of its request span) and Ordo's
// MCP client writes it (its tool calls to upstream servers). Both use
// otel's global propagator, a no-op while tracing is off.
package tracemeta

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// Inject writes ctx's trace context into meta, allocating it only when
// there is some to write.
func Inject(ctx context.Context, meta *mcp.Meta) *mcp.Meta {
	c := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, c)
	if len(c) == 0 {
		return meta
	}
	if meta == nil {
		meta = &mcp.Meta{}
	}
	if meta.AdditionalFields == nil {
		meta.AdditionalFields = map[string]any{}
	}
	for k, v := range c {
		meta.AdditionalFields[k] = v
	}
	return meta
}

// Extract returns ctx with the trace context found in meta, if any.
func Extract(ctx context.Context, meta *mcp.Meta) context.Context {
	if meta == nil {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, carrier(meta.AdditionalFields))
}

// carrier reads a _meta bag as a propagation carrier.
type carrier map[string]any

func (c carrier) Get(key string) string {
	s, _ := c[key].(string)
	return s
}

func (c carrier) Set(key, value string) { c[key] = value }

func (c carrier) Keys() []string {
	out := make([]string, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	return out
}
