package agent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/host/mcpsource"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/plugins/sdk"
)

const addPlanJSON = `{"version":"1.0","goal":"add two and three","timezone":"UTC","actions":[
 {"id":"sum_them","tool":"calc.add","intent":"read","requires":[],"produces":["sum"],"inputs":{"a":2,"b":3}}]}`

// serveCalc serves a real MCP server (mcp-go, streamable HTTP) with one
// read-only tool, add, on ln.
func serveCalc(ln net.Listener) *http.Server {
	s := testmcp.NewCalc(true)
	hs := &http.Server{Handler: server.NewStreamableHTTPServer(s, server.WithStateful(true))}
	go hs.Serve(ln)
	return hs
}

// Issue 9: while an HTTP upstream is down its tools are unavailable. A
// plan using one — the caller's, the planner's or the re-planner's — is
// refused with CodeToolUnavailable naming the action and tool, before any
// tool runs; the planner and re-planner are not offered it. Once the
// server returns, the same plan is accepted and runs.
func TestUnavailableUpstreamToolRefusedUntilItReturns(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	hs := serveCalc(ln)
	t.Cleanup(func() { hs.Close() })
	h, err := host.New(host.WithRetry(host.RetryPolicy{MaxAttempts: 1}), host.WithUpstreamOpener(mcpsource.Open))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	failing := weatherTool(func(context.Context, sdk.Call) (any, error) {
		return nil, sdk.ToolError(false, "API rate limit exceeded")
	})
	p, err := host.InProcess(failing, searchTool())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddProvider(ctx, "seed", "1", p); err != nil {
		t.Fatal(err)
	}
	// A short poll notices the server going away without a call.
	if err := h.AddUpstream(ctx, host.UpstreamSpec{Name: "calc", URL: "http://" + addr + "/mcp", PollInterval: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	// eng is an engine planning with a scripted model (role, reply pairs);
	// seen returns what each model call was sent.
	eng := func(roleReplies ...string) (_ *Engine, seen func() string) {
		var rs []llmtest.Reply
		for i := 0; i+1 < len(roleReplies); i += 2 {
			rs = append(rs, llmtest.Reply{Role: roleReplies[i], Content: roleReplies[i+1]})
		}
		m, srv := scripted(t, rs...)
		return New(Config{}, Deps{Tools: h, LLM: m}), func() string {
			var in []string
			for _, r := range srv.Requests() {
				in = append(in, r.Role+": "+r.Messages[len(r.Messages)-1].Content)
			}
			return strings.Join(in, "\n")
		}
	}
	refused := func(what string, run *contracts.Run, err error) {
		t.Helper()
		wantStatus(t, run, err, contracts.RunFailed)
		e := run.Error
		if e.Code != contracts.CodeToolUnavailable || !e.Retryable || e.Details["action"] != "sum_them" || e.Details["tool"] != "calc.add" ||
			!strings.Contains(e.Message, "calc.add") {
			t.Fatalf("%s: error %+v, want %d naming sum_them and calc.add", what, e, contracts.CodeToolUnavailable)
		}
		for _, s := range run.Steps {
			if s.Tool == "calc.add" {
				t.Fatalf("%s: calc.add ran: %+v", what, run.Steps)
			}
		}
	}

	run, err := New(Config{}, Deps{Tools: h}).Plan(ctx, Request{Plan: mustPlan(t, addPlanJSON)})
	wantStatus(t, run, err, contracts.RunReady)

	hs.Close()
	testwait.Until(t, 15*time.Second, "calc.add unavailable", func() bool { return !h.Available("calc.add") })
	if _, ok := h.Lookup("calc.add"); !ok {
		t.Fatal("a down upstream's tool left the catalog")
	}
	// The caller's plan.
	run, err = New(Config{}, Deps{Tools: h}).Plan(ctx, Request{Plan: mustPlan(t, addPlanJSON)})
	refused("caller plan", run, err)
	// The planner's plan; the planner was not offered calc.add.
	e, seen := eng("planner", addPlanJSON)
	run, err = e.Plan(ctx, Request{Goal: "add two and three"})
	refused("planner plan", run, err)
	if in := seen(); strings.Contains(in, "calc.add") || !strings.Contains(in, "web.search") {
		t.Fatalf("planner candidates while calc is down:\n%s", in)
	}
	// The re-planner's plan after weather.get fails; it was not offered calc.add either.
	e, seen = eng("planner", weatherPlan, "replanner", addPlanJSON)
	run, err = e.Run(ctx, Request{Goal: "weather in Seoul"})
	refused("re-planned plan", run, err)
	if in := seen(); !strings.Contains(in, "replanner: ") || strings.Contains(in, "calc.add") {
		t.Fatalf("re-planner candidates while calc is down:\n%s", in)
	}

	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	hs = serveCalc(ln)
	t.Cleanup(func() { hs.Close() })
	testwait.Until(t, 15*time.Second, "calc.add available again", func() bool { return h.Available("calc.add") })
	e, seen = eng("planner", addPlanJSON, "composer", "5")
	run, err = e.Run(ctx, Request{Goal: "add two and three"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if got := fmt.Sprint(stateOf(t, run, "sum")); got != "5" {
		t.Fatalf("sum = %v", got)
	}
	if !strings.Contains(seen(), "calc.add") {
		t.Fatal("the planner was not offered calc.add once it returned")
	}
}
