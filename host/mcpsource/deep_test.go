package mcpsource_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/jsonbound"
	"github.com/ordo-run/ordo/internal/testwait"
)

// deepEnv makes the test binary a stdio upstream serving deepServer.
const deepEnv = "ORDO_TEST_DEEP_UPSTREAM"

func TestMain(m *testing.M) {
	if os.Getenv(deepEnv) != "" {
		_ = server.ServeStdio(deepServer())
		return
	}
	os.Exit(m.Run())
}

// deepServer has a tool nest whose result nests "depth" arrays deep and a
// tool big whose text is "bytes" long; with "notify" they send a
// notification first, so streamable HTTP answers with an event stream
// instead of a JSON body.
func deepServer() *server.MCPServer {
	s := server.NewMCPServer("deep", "1.0.0", server.WithToolCapabilities(false), server.WithLogging())
	s.AddTool(mcp.NewTool("nest", mcp.WithDescription("Nests a value."),
		mcp.WithNumber("depth", mcp.Required()), mcp.WithBoolean("notify"),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.GetBool("notify", false) {
				_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/message",
					map[string]any{"level": "info", "data": "nesting"})
			}
			var v any = "leaf"
			for range req.GetInt("depth", 0) {
				v = []any{v}
			}
			return mcp.NewToolResultStructured(map[string]any{"v": v}, "nested"), nil
		})
	s.AddTool(mcp.NewTool("big", mcp.WithDescription("Answers with a text of the size asked."),
		mcp.WithNumber("bytes", mcp.Required()), mcp.WithBoolean("notify"),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithIdempotentHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.GetBool("notify", false) {
				_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/message",
					map[string]any{"level": "info", "data": "growing"})
			}
			return mcp.NewToolResultText(strings.Repeat("x", req.GetInt("bytes", 0))), nil
		})
	return s
}

// TestDeepUpstreamResultRefused: an answer nested 9,000 deep is refused
// (6003, naming 1016 and the limit) before mcp-go decodes it — without the
// bound mcp-go decodes it whole and only the host's result check refuses it
// — over HTTP (a JSON body, an event stream) and stdio; the upstream stays
// usable.
func TestDeepUpstreamResultRefused(t *testing.T) {
	addr := freeAddr(t)
	serve(t, addr, deepServer())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, host.WithUpstreams(
		host.UpstreamSpec{Name: "web", URL: "http://" + addr + "/mcp", BearerToken: token},
		host.UpstreamSpec{Name: "proc", Command: []string{self}, Env: map[string]string{deepEnv: "1"}},
	), host.WithRetry(host.RetryPolicy{MaxAttempts: 1}))
	for _, tc := range []struct {
		tool   string
		notify bool
	}{{"web.nest", false}, {"web.nest", true}, {"proc.nest", false}} {
		testwait.Until(t, 30*time.Second, tc.tool, func() bool { _, ok := h.Lookup(tc.tool); return ok })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		payload, _ := json.Marshal(map[string]any{"depth": 9_000, "notify": tc.notify})
		_, err := h.Call(ctx, tc.tool, payload, "")
		cancel()
		if contracts.CodeOf(err) != contracts.CodeToolInvalidOutput ||
			!strings.Contains(err.Error(), "answer refused by ordo: ordo 1016: JSON nests deeper than 64 levels") {
			t.Errorf("%s notify=%v: %v", tc.tool, tc.notify, err)
		}
		if got := call(t, h, tc.tool, map[string]any{"depth": 3, "notify": tc.notify}); got["v"] == nil {
			t.Errorf("%s after the refusal: %v", tc.tool, got)
		}
	}
	_, err = h.Call(context.Background(), "web.nest", json.RawMessage(`{"depth":65}`), "")
	if contracts.CodeOf(err) != contracts.CodeToolInvalidOutput || !strings.Contains(err.Error(), "1016") {
		t.Errorf("a result one level too deep: %v", err)
	}
}

// TestHugeUpstreamResultRefused: an answer larger than
// jsonbound.MaxMessage is refused (6003) while it is read, never held
// whole — without the bound a hostile upstream could make Ordo hold any
// amount of memory — over HTTP (a JSON body, an event stream) and stdio;
// the upstream stays usable.
func TestHugeUpstreamResultRefused(t *testing.T) {
	addr := freeAddr(t)
	serve(t, addr, deepServer())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, host.WithUpstreams(
		host.UpstreamSpec{Name: "web", URL: "http://" + addr + "/mcp", BearerToken: token},
		host.UpstreamSpec{Name: "proc", Command: []string{self}, Env: map[string]string{deepEnv: "1"}},
	), host.WithRetry(host.RetryPolicy{MaxAttempts: 1}))
	for _, tc := range []struct {
		tool   string
		notify bool
	}{{"web.big", false}, {"web.big", true}, {"proc.big", false}} {
		testwait.Until(t, 30*time.Second, tc.tool, func() bool { _, ok := h.Lookup(tc.tool); return ok })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		payload, _ := json.Marshal(map[string]any{"bytes": jsonbound.MaxMessage, "notify": tc.notify})
		_, err := h.Call(ctx, tc.tool, payload, "")
		cancel()
		if contracts.CodeOf(err) != contracts.CodeToolInvalidOutput || !strings.Contains(err.Error(), "answer refused by ordo") ||
			!strings.Contains(err.Error(), fmt.Sprint(jsonbound.MaxMessage)) {
			t.Errorf("%s notify=%v: %.300v", tc.tool, tc.notify, err)
		}
		if got := call(t, h, tc.tool, map[string]any{"bytes": 10, "notify": tc.notify}); got["text"] != "xxxxxxxxxx" {
			t.Errorf("%s after the refusal: %v", tc.tool, got)
		}
	}
}
