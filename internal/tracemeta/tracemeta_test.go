package tracemeta

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestMetaCarriesTraceContext: nothing is written while tracing is off
// (otel's default propagator); once on, the trace context written beside
// what _meta held is read back as the same span context.
func TestMetaCarriesTraceContext(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	if out := Inject(ctx, nil); out != nil {
		t.Fatalf("tracing off, yet _meta got %v", out.AdditionalFields)
	}
	otel.SetTextMapPropagator(propagation.TraceContext{}) // as telemetry.StartTracing does
	meta := Inject(ctx, &mcp.Meta{AdditionalFields: map[string]any{"ordo/idempotency_key": "k"}})
	if meta.AdditionalFields["traceparent"] == nil || meta.AdditionalFields["ordo/idempotency_key"] != "k" {
		t.Fatalf("meta: %v", meta.AdditionalFields)
	}
	got := trace.SpanContextFromContext(Extract(context.Background(), meta))
	if got.TraceID() != sc.TraceID() || got.SpanID() != sc.SpanID() {
		t.Errorf("extracted %v, want %v", got, sc)
	}
}
