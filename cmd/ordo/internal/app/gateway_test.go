package app

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestGatewayScopesFromPolicy: with expose_tools, a catalog tool called
// directly is judged with the caller's configured scopes, like its runs:
// the stdio user ("local") may record only when policy.users grants it;
// without the scope ledger__record is not listed to them, and call_tool
// is denied (2010).
func TestGatewayScopesFromPolicy(t *testing.T) {
	for _, tc := range []struct {
		users   string
		granted bool
	}{{"{local: [ledger:write]}", true}, {"{ada: [ledger:write]}", false}} {
		cfg := load(t, "expose_tools: true\npolicy:\n  default_scopes: []\n  users: "+tc.users+"\n")
		a := open(t, cfg)
		srv, err := a.MCPServer("test", envOf())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Close() })
		c := stdioClient(t, func(ctx context.Context, in io.Reader, out io.Writer) error { return srv.ServeStdio(ctx, in, out) })
		tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		listed := slices.ContainsFunc(tools.Tools, func(tl mcp.Tool) bool { return tl.Name == "ledger__record" })
		_, direct := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{
			Name: "ledger__record", Arguments: map[string]any{"entry": "x"}}})
		if listed != tc.granted || (direct == nil) != tc.granted {
			t.Errorf("users %s: ledger__record listed %v, direct call error %v", tc.users, listed, direct)
		}
		res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{
			Name: "call_tool", Arguments: map[string]any{"tool": "ledger.record", "arguments": map[string]any{"entry": "y"}}}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(mcp.TextContent).Text
		if res.IsError == tc.granted || (!tc.granted && !strings.Contains(text, "2010")) {
			t.Errorf("users %s: call_tool isError %v: %s", tc.users, res.IsError, text)
		}
	}
}

// stdioClient connects an MCP client to serve over in-memory pipes.
func stdioClient(t *testing.T, serve func(ctx context.Context, in io.Reader, out io.Writer) error) *client.Client {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = serve(ctx, serverIn, serverOut); close(done) }()
	c := client.NewClient(transport.NewIO(clientIn, clientOut, io.NopCloser(strings.NewReader(""))))
	t.Cleanup(func() {
		_ = c.Close()
		cancel()
		_ = serverIn.Close()
		_ = clientIn.Close()
		<-done
	})
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "app-test", Version: "1"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		t.Fatal(err)
	}
	return c
}
