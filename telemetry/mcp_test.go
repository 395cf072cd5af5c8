package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestMCPSpansBounded: a client that sends methods nobody defined (each
// request a new name) mints no span names and leaves no text of its own
// in span attributes: like the metrics label, an unknown method is
// "other"; a known one keeps its name.
func TestMCPSpansBounded(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	srv := server.NewMCPServer("t", "1", New().MCPOptions()...)
	ctx := context.Background()
	for i, method := range []string{"x-secret-sk-live-0", "x-secret-sk-live-1", string(mcp.MethodPing)} {
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": method})
		srv.HandleMessage(ctx, msg)
	}
	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want one per request", len(spans))
	}
	for i, want := range []string{"other", "other", "ping"} {
		s := spans[i]
		dump := fmt.Sprint(s.Name(), s.Attributes(), s.Events(), s.Status())
		if s.Name() != want || strings.Contains(dump, "sk-live") {
			t.Errorf("span %d: %s, want name %q and no client text", i, dump, want)
		}
	}
}
