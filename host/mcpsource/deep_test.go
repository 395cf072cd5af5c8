package mcpsource_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
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
	h := refusedEverywhere(t, "nest", map[string]any{"depth": 9_000}, map[string]any{"depth": 3},
		"answer refused by ordo: ordo 1016: JSON nests deeper than 64 levels", func(got map[string]any) bool { return got["v"] != nil })
	_, err := h.Call(context.Background(), "web.nest", json.RawMessage(`{"depth":65}`), "")
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
	refusedEverywhere(t, "big", map[string]any{"bytes": jsonbound.MaxMessage}, map[string]any{"bytes": 10},
		fmt.Sprintf("answer refused by ordo: ordo 1000: message larger than %d bytes", jsonbound.MaxMessage),
		func(got map[string]any) bool { return got["text"] == "xxxxxxxxxx" })
}

// refusedEverywhere mounts deepServer over HTTP and stdio and calls its
// tool over a JSON body, an event stream and stdio: with bad it must fail
// at once with 6003 whose message holds want, then with good be answered
// (ok judges the result). It returns the host.
func refusedEverywhere(t *testing.T, tool string, bad, good map[string]any, want string, ok func(map[string]any) bool) *host.Host {
	t.Helper()
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
		source string
		notify bool
	}{{"web", false}, {"web", true}, {"proc", false}} {
		id := tc.source + "." + tool
		testwait.Until(t, 30*time.Second, id, func() bool { _, ok := h.Lookup(id); return ok })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		payload, _ := json.Marshal(withNotify(bad, tc.notify))
		_, err := h.Call(ctx, id, payload, "")
		cancel()
		if contracts.CodeOf(err) != contracts.CodeToolInvalidOutput || !strings.Contains(err.Error(), want) {
			t.Errorf("%s notify=%v: %.300v", id, tc.notify, err)
		}
		if got := call(t, h, id, withNotify(good, tc.notify)); !ok(got) {
			t.Errorf("%s after the refusal: %.300v", id, got)
		}
	}
	return h
}

func withNotify(args map[string]any, notify bool) map[string]any {
	out := maps.Clone(args)
	out["notify"] = notify
	return out
}
