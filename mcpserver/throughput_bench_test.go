package mcpserver_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/embedded"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// BenchmarkExecuteOverHTTP: MCP execute of a one-action plan (an
// in-process tool) over streamable HTTP from 16 client sessions at once,
// every run checkpointed in the store; reports runs/s. Store: the
// embedded file (synchronous=FULL, every entry durable) and in memory.
func BenchmarkExecuteOverHTTP(b *testing.B) {
	const sessions = 16
	for _, name := range []string{"embedded", "memory"} {
		b.Run(name, func(b *testing.B) {
			var store memory.Checkpointer = memory.NewMemStore()
			if name == "embedded" {
				st, err := embedded.Open(filepath.Join(b.TempDir(), "ordo.db"))
				if err != nil {
					b.Fatal(err)
				}
				store = st
			}
			defer store.Close()
			url := benchServer(b, store)
			clients := make([]*client.Client, sessions)
			for i := range clients {
				clients[i] = benchClient(b, url)
			}
			args := map[string]any{"plan": map[string]any{"version": "1.0", "goal": "upper", "timezone": "UTC", "actions": []any{
				map[string]any{"id": "a1", "tool": "text.upper", "intent": "transform", "requires": []any{}, "produces": []any{"upper"}, "inputs": map[string]any{"text": "hi"}},
			}}}
			var next sync.Mutex
			left := b.N
			b.ResetTimer()
			var wg sync.WaitGroup
			for _, c := range clients {
				wg.Go(func() {
					for {
						next.Lock()
						if left == 0 {
							next.Unlock()
							return
						}
						left--
						next.Unlock()
						req := mcp.CallToolRequest{}
						req.Params.Name, req.Params.Arguments = "execute", args
						res, err := c.CallTool(context.Background(), req)
						if err != nil || res.IsError {
							b.Errorf("execute: %v %+v", err, res)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}

func benchServer(b *testing.B, store memory.Checkpointer) string {
	h, err := host.New()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	p, err := host.InProcess(sdk.Tool{Contract: contracts.Contract{
		Tool: "text.upper", Service: "text", Description: "upper case", RiskLevel: contracts.RiskRead,
		InputSchema:  schema(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`),
		OutputSchema: schema(`{"type":"object","required":["upper"],"properties":{"upper":{"type":"string"}}}`),
		ProducesMap:  map[string]string{"upper": "$.upper"},
	}, Handler: func(_ context.Context, c sdk.Call) (any, error) {
		return map[string]any{"upper": strings.ToUpper(c.Payload["text"].(string))}, nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	if err := h.AddProvider(context.Background(), "text", "v1", p); err != nil {
		b.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Engine: agent.New(agent.Config{}, agent.Deps{Tools: h, Store: store}), Runs: store, Catalog: h,
		Tokens: []mcpserver.Token{{Token: userToken, Identity: mcpserver.Identity{User: "bench"}}}, Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(ts.Close)
	return ts.URL
}

func benchClient(b *testing.B, url string) *client.Client {
	tr, err := transport.NewStreamableHTTP(url+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + userToken}))
	if err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(tr)
	b.Cleanup(func() { _ = c.Close() })
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: fmt.Sprintf("bench-%p", c), Version: "1"}
	if _, err := c.Initialize(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	return c
}
