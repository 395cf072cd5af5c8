package testmcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// NewCalc is an mcp-go server named calc with one read-only tool, add,
// that returns {"sum": a+b} as structured output. listChanged is whether
// it announces tool list changes.
func NewCalc(listChanged bool) *server.MCPServer {
	s := server.NewMCPServer("calc", "1.0.0", server.WithToolCapabilities(listChanged))
	AddAdd(s)
	return s
}

// AddAdd adds calc's add tool to s, or replaces it: more extends its
// definition (a new input field, say) keeping its description and
// annotations, for tests of a tool whose contract changes.
func AddAdd(s *server.MCPServer, more ...mcp.ToolOption) {
	opts := append([]mcp.ToolOption{mcp.WithDescription("Adds two numbers."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required()),
		mcp.WithOutputSchema[struct {
			Sum float64 `json:"sum"`
		}](),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)}, more...)
	s.AddTool(mcp.NewTool("add", opts...),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"sum": req.GetFloat("a", 0) + req.GetFloat("b", 0)}, "sum"), nil
		})
}

// ServeCalcAt serves NewCalc(true) over streamable HTTP on loopback,
// answering only at path (404 elsewhere), as services that carry their
// key in the path do, until the test ends; it returns the base URL.
func ServeCalcAt(tb testing.TB, path string) string {
	tb.Helper()
	h := server.NewStreamableHTTPServer(NewCalc(true), server.WithStateful(true))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL
}
