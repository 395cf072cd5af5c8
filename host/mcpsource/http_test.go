package mcpsource_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/host/mcpsource"
	"github.com/ordo-run/ordo/internal/syncbuf"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
)

const token = "s3cret-token"

// calcServer is an mcp-go server with an add tool (structured output) and a
// tool that always reports isError.
func calcServer(notify bool) *server.MCPServer {
	s := testmcp.NewCalc(notify)
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Always fails."),
		mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("boom: the disk is on fire"), nil
		})
	return s
}

func addLater(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("later", mcp.WithDescription("Added while running."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("later"), nil
		})
}

// serve runs s over streamable HTTP on addr behind a bearer-token check;
// a fresh handler each time, as a restarted server would have.
func serve(t testing.TB, addr string, s *server.MCPServer) *http.Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	mcpHandler := server.NewStreamableHTTPServer(s, server.WithStateful(true))
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return hs
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// An HTTP upstream declared in config while down starts without tools,
// appears when the server comes up, follows tools/list_changed, makes its
// tools unavailable while the server is gone and callable once it returns.
func TestHTTPUpstreamDownAndBack(t *testing.T) {
	addr := freeAddr(t)
	spec := host.UpstreamSpec{Name: "calc", URL: "http://" + addr + "/mcp", BearerToken: token,
		PollInterval: time.Hour} // only notifications and failed calls can move it
	h := newHost(t, host.WithUpstreams(spec), host.WithRetry(host.RetryPolicy{MaxAttempts: 1}))

	u := upstream(t, h, "calc")
	if u.Connected || u.State != host.StateRestarting || len(u.Tools) != 0 || u.Error == "" || u.Origin != "config" {
		t.Fatalf("declared while down: %+v", u)
	}

	s := calcServer(true)
	hs := serve(t, addr, s)
	testwait.Until(t, 30*time.Second, "calc tools", func() bool { _, ok := h.Lookup("calc.add"); return ok })
	if !h.Available("calc.add") || len(h.Unavailable()) != 0 || h.Available("calc.nope") {
		t.Fatalf("up: available %v, unavailable %v", h.Available("calc.add"), h.Unavailable())
	}
	add, _ := h.Lookup("calc.add")
	if add.Contract.RiskLevel != contracts.RiskRead || !add.Contract.Idempotent {
		t.Fatalf("add contract %+v", add.Contract)
	}
	res := call(t, h, "calc.add", map[string]any{"a": 2, "b": 3})
	if st, err := add.Produce(res); err != nil || st["sum"] != json.Number("5") && st["sum"] != 5.0 {
		t.Fatalf("add: %v %v", st, err)
	}
	if fail, _ := h.Lookup("calc.fail"); fail.Contract.RiskLevel != contracts.RiskDestructive {
		t.Fatalf("fail risk %s", fail.Contract.RiskLevel)
	}
	_, err := h.Call(context.Background(), "calc.fail", json.RawMessage(`{}`), "k")
	if ce := contracts.AsError(err); ce == nil || ce.Code != contracts.CodeToolFailed || ce.Retryable {
		t.Fatalf("isError: %v", err)
	}

	addLater(s)
	testwait.Until(t, 30*time.Second, "calc.later via tools/list_changed", func() bool { _, ok := h.Lookup("calc.later"); return ok })

	hs.Close()
	_, err = h.Call(context.Background(), "calc.add", json.RawMessage(`{"a":1,"b":1}`), "k")
	if ce := contracts.AsError(err); ce == nil || ce.Code != contracts.CodeToolUnavailable || !ce.Retryable {
		t.Fatalf("server down: %v", err)
	}
	testwait.Until(t, 30*time.Second, "calc marked down", func() bool { return upstream(t, h, "calc").State == host.StateRestarting })
	if _, ok := h.Lookup("calc.add"); !ok {
		t.Fatal("a down upstream's tools left the catalog")
	}
	// Its tools are known but unavailable: plans using them are refused.
	if h.Available("calc.add") || strings.Join(h.Unavailable(), " ") != "calc.add calc.fail calc.later" {
		t.Fatalf("down: available %v, unavailable %v", h.Available("calc.add"), h.Unavailable())
	}
	_, err = h.Call(context.Background(), "calc.add", json.RawMessage(`{"a":1,"b":1}`), "k")
	if contracts.CodeOf(err) != contracts.CodeToolUnavailable {
		t.Fatalf("while down: %v", err)
	}

	serve(t, addr, s)
	testwait.Until(t, 30*time.Second, "calc back", func() bool { return upstream(t, h, "calc").Connected })
	call(t, h, "calc.add", map[string]any{"a": 1, "b": 1})
	if !h.Available("calc.add") || len(h.Unavailable()) != 0 {
		t.Fatalf("back: available %v, unavailable %v", h.Available("calc.add"), h.Unavailable())
	}
	if u := upstream(t, h, "calc"); u.Restarts != 1 || u.State != host.StateRunning {
		t.Fatalf("after return: %+v", u)
	}
}

// A server that never notifies is caught by the periodic re-list.
func TestHTTPUpstreamPolled(t *testing.T) {
	addr := freeAddr(t)
	s := calcServer(false)
	serve(t, addr, s)
	h := newHost(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := h.Subscribe(ctx)
	err := h.AddUpstream(ctx, host.UpstreamSpec{Name: "calc", URL: "http://" + addr + "/mcp", BearerToken: token,
		PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, events, host.Added, 2)
	addLater(s)
	if got := collect(t, events, host.Added, 1); got[0] != "calc.later" {
		t.Fatalf("added %v", got)
	}
}

// A wrong token or an unreachable URL refuses an admin add, leaving nothing.
func TestHTTPUpstreamRefused(t *testing.T) {
	addr := freeAddr(t)
	serve(t, addr, calcServer(true))
	h := newHost(t, host.WithStartTimeout(5*time.Second))
	ctx := context.Background()
	for name, spec := range map[string]host.UpstreamSpec{
		"wrong token":  {Name: "calc", URL: "http://" + addr + "/mcp", BearerToken: "nope"},
		"nobody there": {Name: "calc", URL: "http://" + freeAddr(t) + "/mcp"},
	} {
		if err := h.AddUpstream(ctx, spec); contracts.CodeOf(err) != contracts.CodePluginRefused {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(h.Sources()) != 0 || len(h.List()) != 0 {
		t.Fatalf("left behind: %+v", h.Sources())
	}
}

// TestUpstreamListChurnBounded: an upstream that changes its tool list
// without pause (a list_changed every millisecond) is re-listed at most
// once per mcpsource.RelistGap, not as fast as it answers: each re-list
// is converted and compiled and each change re-indexed and sent to every
// gateway client, so an unbounded rate would let it keep Ordo busy. The
// last list is still read.
func TestUpstreamListChurnBounded(t *testing.T) {
	var lists atomic.Int64
	hooks := &server.Hooks{}
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { lists.Add(1) })
	s := server.NewMCPServer("churn", "1.0.0", server.WithToolCapabilities(true), server.WithHooks(hooks))
	set := func(i int) { // one tool whose description changes: each change sends list_changed
		s.AddTool(mcp.NewTool("t", mcp.WithDescription(fmt.Sprintf("Churn %d.", i))),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
	}
	set(0)
	addr := freeAddr(t)
	serve(t, addr, s)
	// The poll reads the last list should the server drop the last
	// notifications (mcp-go drops what a busy session's queue cannot take).
	const poll = 2 * time.Second
	h := newHost(t, host.WithUpstreams(host.UpstreamSpec{Name: "churn", URL: "http://" + addr + "/mcp", BearerToken: token,
		PollInterval: poll}))
	described := func(i int) func() bool {
		return func() bool {
			tool, ok := h.Lookup("churn.t")
			return ok && tool.Contract.Description == fmt.Sprintf("Churn %d.", i)
		}
	}
	testwait.Until(t, 30*time.Second, "the first description", described(0))
	before, start := lists.Load(), time.Now()
	i := 1
	for ; time.Since(start) < 3*time.Second; i++ {
		set(i)
		time.Sleep(time.Millisecond)
	}
	testwait.Until(t, 30*time.Second, "the last description", described(i-1))
	elapsed := time.Since(start)
	n, bound := lists.Load()-before, 2+int64(elapsed/mcpsource.RelistGap)+int64(elapsed/poll)
	if n > bound {
		t.Fatalf("%d changes re-listed %d times in %s; at most %d", i-1, n, elapsed, bound)
	}
	t.Logf("%d changes re-listed %d times in %s", i-1, n, elapsed)
}

// An upstream's credentials — its bearer token, a key in its URL's query
// or path (its URL secret, or a segment that looks like a key) — are in no
// error, status, source list or log line: not when a server (or a proxy
// before it) refuses a request and echoes it, headers and URL, in the body
// mcp-go quotes; not when the server cannot be reached (net/http's error
// names the URL). The key still reaches a server that takes it.
func TestHTTPUpstreamErrorsHideCredentials(t *testing.T) {
	const secret = "upstream-bearer-s3cret-0123456789"
	for name, c := range map[string]struct{ path, urlSecret, key string }{
		"query":      {"/mcp?api_key=url-key-s3cret", "", "url-key-s3cret"},
		"path token": {"/s/Tk3nInPath0123456789/mcp", "", "Tk3nInPath0123456789"},
		"url secret": {"/s/{secret}/mcp", "lowercase-only-secret", "lowercase-only-secret"},
	} {
		t.Run(name, func(t *testing.T) {
			echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "bad gateway for "+r.Header.Get("Authorization")+" at "+r.URL.String(), http.StatusBadGateway)
			}))
			t.Cleanup(echo.Close)
			var logs syncbuf.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			spec := host.UpstreamSpec{Name: "echo", URL: echo.URL + c.path, URLSecret: c.urlSecret, BearerToken: secret}
			h := newHost(t, host.WithStartTimeout(5*time.Second), host.WithLogger(log), host.WithUpstreams(spec))
			ctx := context.Background()
			spec.Name = "added"
			err := h.AddUpstream(ctx, spec)
			if contracts.CodeOf(err) != contracts.CodePluginRefused || !strings.Contains(err.Error(), "bad gateway for Bearer "+contracts.Redacted+" at /") ||
				!strings.Contains(err.Error(), contracts.Redacted+"/mcp") && !strings.Contains(err.Error(), "?api_key="+contracts.Redacted) {
				t.Fatalf("add: %v", err)
			}
			gone := host.UpstreamSpec{Name: "gone", URL: "http://" + freeAddr(t) + c.path, URLSecret: c.urlSecret}
			goneErr := h.AddUpstream(ctx, gone)
			if contracts.CodeOf(goneErr) != contracts.CodePluginRefused {
				t.Fatalf("add an unreachable upstream: %v", goneErr)
			}
			var status string
			for _, s := range h.Sources() {
				status += s.Name + ": " + s.Path + ": " + s.Error + "\n"
			}
			upstreams, _ := json.Marshal(h.Upstreams())
			if !strings.Contains(status, "echo: http://") || !strings.Contains(logs.String(), contracts.Redacted) {
				t.Fatalf("the configured upstream's failure is not shown: %s\n%s", status, logs.String())
			}
			for what, text := range map[string]string{"add": err.Error(), "add unreachable": goneErr.Error(), "sources": status,
				"upstreams": string(upstreams), "log": logs.String()} {
				if strings.Contains(text, secret) || strings.Contains(text, c.key) {
					t.Fatalf("the %s shows a credential: %s", what, text)
				}
			}

			addr := freeAddr(t)
			keyed := server.NewStreamableHTTPServer(calcServer(false))
			ln, lerr := net.Listen("tcp", addr)
			if lerr != nil {
				t.Fatal(lerr)
			}
			spec = host.UpstreamSpec{Name: "keyed", URL: "http://" + addr + c.path, URLSecret: c.urlSecret}
			want, _ := url.Parse(spec.Endpoint())
			hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != want.Path || r.URL.RawQuery != want.RawQuery {
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				keyed.ServeHTTP(w, r)
			})}
			go hs.Serve(ln)
			t.Cleanup(func() { hs.Close() })
			if err := h.AddUpstream(ctx, spec); err != nil {
				t.Fatal(err)
			}
			out, err := h.Call(ctx, "keyed.add", json.RawMessage(`{"a":2,"b":3}`), "")
			if err != nil || !strings.Contains(string(out), `"sum":5`) {
				t.Fatalf("keyed.add: %s %v", out, err)
			}
		})
	}
}
