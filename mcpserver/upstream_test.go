package mcpserver_test

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
)

// calcToken is the bearer token calcUpstream demands.
const calcToken = "calc-upstream-token-0123456789"

// calcUpstream is a real remote MCP server: mcp-go over streamable HTTP
// on loopback, behind a bearer-token check, with one read-only tool
// calc.add. stop closes it; start serves it again on the same address (a
// fresh handler, as a restarted server would have).
type calcUpstream struct {
	t    *testing.T
	addr string
	mcp  *server.MCPServer
	hs   *http.Server
}

func newCalcUpstream(t *testing.T) *calcUpstream {
	t.Helper()
	s := testmcp.NewCalc(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &calcUpstream{t: t, addr: ln.Addr().String(), mcp: s}
	u.serve(ln)
	t.Cleanup(u.stop)
	return u
}

func (u *calcUpstream) url() string { return "http://" + u.addr + "/mcp" }

func (u *calcUpstream) serve(ln net.Listener) {
	h := server.NewStreamableHTTPServer(u.mcp, server.WithStateful(true))
	u.hs = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+calcToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})}
	go u.hs.Serve(ln)
}

func (u *calcUpstream) stop() { u.hs.Close() }

func (u *calcUpstream) start() {
	u.t.Helper()
	ln, err := net.Listen("tcp", u.addr)
	if err != nil {
		u.t.Fatal(err)
	}
	u.serve(ln)
}

// addPlan is a one-step plan calling calc.add.
func addPlan(a, b int) map[string]any {
	return map[string]any{
		"version": "1.0", "goal": "add two numbers", "timezone": "UTC",
		"actions": []any{map[string]any{
			"id": "sum_them", "tool": "calc.add", "intent": "read",
			"requires": []any{}, "produces": []any{"sum"}, "inputs": map[string]any{"a": a, "b": b},
		}},
	}
}

// Issue 9: an admin mounts upstream MCP servers through the add_upstream
// tool — a streamable-HTTP server with its token in the server's
// environment, and a stdio server (npm's server-memory) from a command
// line — then runs a plan on one and removes both with remove_plugin. A
// user is refused (HTTP 403); bad arguments are 1000 naming the argument
// and leave nothing behind.
func TestAddUpstreamAdminTool(t *testing.T) {
	t.Setenv("ORDO_TEST_CALC_TOKEN", calcToken)
	t.Setenv("ORDO_TEST_WRONG_TOKEN", "not-the-calc-token")
	calc := newCalcUpstream(t)
	e := newEnv(t)
	ts := e.httpServer(t)
	admin := httpClient(t, ts.URL, adminToken, clientOpts{})
	user := httpClient(t, ts.URL, userToken, clientOpts{})

	res, err := admin.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Tools, func(tl mcp.Tool) bool { return tl.Name == "add_upstream" })
	if i < 0 {
		t.Fatal("admins are not offered add_upstream")
	}
	ann := res.Tools[i].Annotations
	if ann.ReadOnlyHint == nil || *ann.ReadOnlyHint || ann.DestructiveHint == nil || !*ann.DestructiveHint ||
		ann.IdempotentHint == nil || *ann.IdempotentHint || ann.OpenWorldHint == nil || !*ann.OpenWorldHint {
		t.Errorf("add_upstream hints: %+v", ann)
	}
	if slices.Contains(testmcp.ToolNames(t, user), "add_upstream") {
		t.Error("a user is offered add_upstream")
	}
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_upstream","arguments":{"name":"calc","mcp_url":"` + calc.url() + `"}}}`
	if status, e := post(t, ts.URL, "Bearer "+userToken, body); status != http.StatusForbidden || e.Code != contracts.CodeForbidden {
		t.Fatalf("a user's add_upstream: status %d code %d, want 403 %d", status, e.Code, contracts.CodeForbidden)
	}

	for _, tc := range []struct {
		name  string
		args  map[string]any
		code  contracts.Code
		field string
	}{
		{"no server", map[string]any{"name": "calc"}, contracts.CodeInvalidInput, "mcp"},
		{"two servers", map[string]any{"name": "calc", "mcp": "mcp-server-memory", "mcp_url": calc.url()}, contracts.CodeInvalidInput, "mcp"},
		{"bad command line", map[string]any{"name": "calc", "mcp": "'unterminated"}, contracts.CodeInvalidInput, "mcp"},
		{"token for stdio", map[string]any{"name": "calc", "mcp": "x", "bearer_token_env": "ORDO_TEST_CALC_TOKEN"}, contracts.CodeInvalidInput, "bearer_token_env"},
		{"unset token variable", map[string]any{"name": "calc", "mcp_url": calc.url(), "bearer_token_env": "ORDO_TEST_NO_SUCH_VAR"}, contracts.CodeInvalidInput, "bearer_token_env"},
		{"env for http", map[string]any{"name": "calc", "mcp_url": calc.url(), "env": map[string]any{"A": "b"}}, contracts.CodeInvalidInput, "env"},
		{"bad url", map[string]any{"name": "calc", "mcp_url": "ftp://example/mcp"}, contracts.CodeInvalidInput, "mcp_url"},
		{"bad poll interval", map[string]any{"name": "calc", "mcp_url": calc.url(), "poll_interval": "soon"}, contracts.CodeInvalidInput, "poll_interval"},
		{"bad override", map[string]any{"name": "calc", "mcp_url": calc.url(), "overrides": map[string]any{"add": map[string]any{"risk": "huge"}}}, contracts.CodeInvalidInput, "overrides.add.risk"},
		{"bad name", map[string]any{"name": "Calc", "mcp_url": calc.url()}, contracts.CodeInvalidInput, "name"},
		{"wrong token", map[string]any{"name": "calc", "mcp_url": calc.url(), "bearer_token_env": "ORDO_TEST_WRONG_TOKEN"}, contracts.CodePluginRefused, ""},
	} {
		code, body := toolError(t, admin, "add_upstream", tc.args)
		details, _ := body["details"].(map[string]any)
		if code != tc.code || tc.field != "" && details["field"] != tc.field {
			t.Errorf("%s: code %d field %v, want %d %q: %v", tc.name, code, details["field"], tc.code, tc.field, body)
		}
	}
	if n := len(call(t, admin, "list_plugins", map[string]any{})["plugins"].([]any)); n != 1 {
		t.Fatalf("refused adds left %d sources, want only the test tools", n)
	}

	out := call(t, admin, "add_upstream", map[string]any{"name": "calc", "mcp_url": calc.url(), "bearer_token_env": "ORDO_TEST_CALC_TOKEN"})
	if out["added"] != "calc" || !slices.Contains(out["tools"].([]any), any("calc.add")) {
		t.Fatalf("add_upstream calc: %v", out)
	}
	if tool, ok := e.host.Lookup("calc.add"); !ok || tool.Contract.RiskLevel != contracts.RiskRead {
		t.Fatalf("calc.add in the catalog: %v %v", tool, ok)
	}
	ran := call(t, admin, "execute", map[string]any{"plan": addPlan(2, 3), "options": map[string]any{"auto_approve": true}})
	if ran["status"] != "completed" {
		t.Fatalf("a plan on the upstream: %v", ran)
	}
	code, _ := toolError(t, admin, "add_upstream", map[string]any{"name": "calc", "mcp_url": calc.url(), "bearer_token_env": "ORDO_TEST_CALC_TOKEN"})
	if code != contracts.CodePluginRefused {
		t.Errorf("a second calc: code %d, want %d", code, contracts.CodePluginRefused)
	}

	t.Run("stdio command line", func(t *testing.T) {
		mem := npmServer(t, "mcp-server-memory")
		memFile := t.TempDir() + "/memory.jsonl"
		out := call(t, admin, "add_upstream", map[string]any{"name": "mem", "mcp": "'" + mem + "'",
			"env": map[string]any{"MEMORY_FILE_PATH": memFile}})
		if !slices.Contains(out["tools"].([]any), any("mem.read_graph")) {
			t.Fatalf("add_upstream mem: %v", out)
		}
		var kind, state any
		for _, p := range call(t, admin, "list_plugins", map[string]any{})["plugins"].([]any) {
			if p := p.(map[string]any); p["name"] == "mem" {
				kind, state = p["kind"], p["state"]
			}
		}
		if kind != "upstream" || state != "running" {
			t.Fatalf("list_plugins mem: kind %v state %v", kind, state)
		}
		call(t, admin, "remove_plugin", map[string]any{"name": "mem"})
		if _, ok := e.host.Lookup("mem.read_graph"); ok {
			t.Fatal("mem's tools stayed after remove_plugin")
		}
	})

	out = call(t, admin, "remove_plugin", map[string]any{"name": "calc"})
	if out["removed"] != "calc" || len(out["plugins"].([]any)) != 1 {
		t.Fatalf("remove_plugin calc: %v", out)
	}
	if _, ok := e.host.Lookup("calc.add"); ok {
		t.Fatal("calc.add stayed after remove_plugin")
	}
}

// Issue 9: while an HTTP upstream is down its tools are unavailable: plan
// (and execute) refuse a plan using one with 6004 naming the action and
// tool, an edit to such a plan is refused and the run left as it was, and
// search_tools leaves the tool out. Once the server returns the same plan
// is accepted, the edit too, and the run completes.
func TestDownUpstreamToolRefusedUntilItReturns(t *testing.T) {
	calc := newCalcUpstream(t)
	e := newEnv(t, withHost(
		host.WithRetry(host.RetryPolicy{MaxAttempts: 1}),
		// A short poll notices the server going away without a call.
		host.WithUpstreams(host.UpstreamSpec{Name: "calc", URL: calc.url(), BearerToken: calcToken, PollInterval: 50 * time.Millisecond})))
	c := e.stdioClient(t, clientOpts{})
	search := func() []string {
		var tools []string
		for _, h := range call(t, c, "search_tools", map[string]any{"query": "add two numbers", "k": 2})["hits"].([]any) {
			tools = append(tools, h.(map[string]any)["tool"].(string))
		}
		return tools
	}
	if hits := search(); len(hits) == 0 || hits[0] != "calc.add" {
		t.Fatalf("search_tools while calc is up: %v", hits)
	}
	waiting := call(t, c, "plan", map[string]any{"plan": addPlan(2, 3)})
	if waiting["status"] != "awaiting_approval" {
		t.Fatalf("plan while calc is up: %v", waiting)
	}

	calc.stop()
	testwait.Until(t, 30*time.Second, "calc.add unavailable", func() bool { return !e.host.Available("calc.add") })
	for _, tool := range []string{"plan", "execute"} {
		code, body := toolError(t, c, tool, map[string]any{"plan": addPlan(2, 3)})
		details, _ := body["details"].(map[string]any)
		if code != contracts.CodeToolUnavailable || details["action"] != "sum_them" || details["tool"] != "calc.add" || details["run_id"] == nil {
			t.Fatalf("%s while calc is down: code %d, %v", tool, code, body)
		}
	}
	code, _ := toolError(t, c, "approve", map[string]any{"run_id": waiting["run_id"], "decision": "edit", "plan": addPlan(4, 5)})
	if code != contracts.CodeToolUnavailable {
		t.Fatalf("an edit using calc.add while it is down: code %d", code)
	}
	if rec := runRecord(t, c, waiting["run_id"]); rec["status"] != "interrupted" || len(rec["plans"].([]any)) != 1 {
		t.Fatalf("the refused edit changed the run: status %v, %d plan versions", rec["status"], len(rec["plans"].([]any)))
	}
	if hits := search(); slices.Contains(hits, "calc.add") {
		t.Fatalf("search_tools while calc is down: %v", hits)
	}

	calc.start()
	testwait.Until(t, 30*time.Second, "calc.add available", func() bool { return e.host.Available("calc.add") })
	if hits := search(); hits[0] != "calc.add" {
		t.Fatalf("search_tools after calc returned: %v", hits)
	}
	if out := call(t, c, "plan", map[string]any{"plan": addPlan(2, 3)}); out["status"] != "awaiting_approval" {
		t.Fatalf("plan after calc returned: %v", out)
	}
	out := call(t, c, "approve", map[string]any{"run_id": waiting["run_id"], "decision": "edit", "plan": addPlan(4, 5)})
	for i := 0; out["status"] == "interrupted"; i++ {
		if i == 3 {
			t.Fatalf("still interrupted: %v", out)
		}
		out = call(t, c, "approve", map[string]any{"run_id": waiting["run_id"], "decision": "approve"})
	}
	if out["status"] != "completed" {
		t.Fatalf("the edited run: %v", out)
	}
	if sum := runRecord(t, c, waiting["run_id"])["state"].(map[string]any)["sum"]; sum != 9.0 {
		t.Fatalf("sum = %v", sum)
	}
}

// An upstream tool's secret arguments never reach the audit trail: a
// field its schema marks writeOnly or format "password", and one an
// override lists in secret_fields, are recorded as [REDACTED] in the run
// of a gateway call, while the upstream gets them whole.
func TestGatewayUpstreamSecretsRedacted(t *testing.T) {
	up := server.NewMCPServer("vaultish", "1.0.0")
	var got map[string]any
	up.AddTool(mcp.NewTool("login", mcp.WithDescription("Logs in."),
		mcp.WithString("user", mcp.Required()),
		mcp.WithString("password", mcp.Required(), mcp.PropertyOption(func(p map[string]any) { p["writeOnly"] = true })),
		mcp.WithString("pin", mcp.PropertyOption(func(p map[string]any) { p["format"] = "password" })),
		mcp.WithString("otp"),
		mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			got = req.GetArguments()
			return mcp.NewToolResultStructured(map[string]any{"ok": true}, "ok"), nil
		})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(hs.Close)
	e := newGatewayEnv(t, agent.Config{}, host.WithUpstreams(host.UpstreamSpec{Name: "crm", URL: hs.URL + "/mcp",
		Overrides: map[string]host.ToolOverride{"login": {SecretFields: []string{"otp"}}}}))
	c := e.stdioClient(t, clientOpts{})
	args := map[string]any{"user": "ada", "password": "hunter2-secret", "pin": "4711-secret", "otp": "998877-secret"}
	if out := call(t, c, "crm__login", args); out["ok"] != true {
		t.Fatalf("crm__login: %v", out)
	}
	if !maps.Equal(got, args) {
		t.Fatalf("the upstream got %v, want %v", got, args)
	}
	raw, _ := json.Marshal(latestGatewayRun(t, c, "crm.login"))
	if strings.Contains(string(raw), "-secret") || !strings.Contains(string(raw), `"user":"ada"`) {
		t.Fatalf("audit record: %s", raw)
	}
}
