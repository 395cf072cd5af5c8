package testmcp

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// NewCalc is an mcp-go server named calc with one read-only tool, add,
// that returns {"sum": a+b} as structured output. listChanged is whether
// it announces tool list changes.
func NewCalc(listChanged bool) *server.MCPServer {
	s := server.NewMCPServer("calc", "1.0.0", server.WithToolCapabilities(listChanged))
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Adds two numbers."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required()),
		mcp.WithOutputSchema[struct {
			Sum float64 `json:"sum"`
		}](),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"sum": req.GetFloat("a", 0) + req.GetFloat("b", 0)}, "sum"), nil
		})
	return s
}
