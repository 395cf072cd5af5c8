package mcpserver_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/policy"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// newGatewayEnv is a real stack with the gateway on: the host (with the
// harness's in-process tools plus a vault tool with a secret field, and
// extra options such as upstreams), the engine over an in-memory store
// that is also the audit store, and the MCP server.
func newGatewayEnv(t *testing.T, cfg agent.Config, hostOpts ...host.Option) *env {
	return newGatewayEnvWith(t, cfg, nil, hostOpts...)
}

// newGatewayEnvWith is newGatewayEnv with the caller-scope function set.
func newGatewayEnvWith(t *testing.T, cfg agent.Config, scopes func(string) []string, hostOpts ...host.Option) *env {
	t.Helper()
	e, h, rec := newStack(t, cfg, append([]host.Option{host.WithLogger(slog.New(slog.DiscardHandler))}, hostOpts...), vaultTools()...)
	e.engine = agent.New(cfg, agent.Deps{Tools: h, Store: e.store, Recommender: rec})
	var err error
	e.srv, err = mcpserver.New(mcpserver.Options{
		Engine: e.engine, Runs: e.store, Catalog: h, Admin: h, Version: "test",
		Tokens:  []mcpserver.Token{{Token: adminToken, Identity: mcpserver.Identity{User: "ada", Roles: []string{mcpserver.RoleAdmin}}}},
		Gateway: &mcpserver.Gateway{Tools: h, Scopes: scopes},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.srv.Close() })
	return e
}

// vaultTools: vault.read reads an entry (its api_key field must never be
// stored); vault.audit needs the vault:audit scope.
func vaultTools() []sdk.Tool {
	return []sdk.Tool{{Contract: contracts.Contract{
		Tool: "vault.read", Service: "vault", Description: "Read a vault entry", RiskLevel: contracts.RiskRead,
		SecretFields: []string{"api_key"},
		InputSchema:  schema(`{"type":"object","required":["name","api_key"],"properties":{"name":{"type":"string"},"api_key":{"type":"string"}}}`),
		OutputSchema: schema(`{"type":"object","required":["value"],"properties":{"value":{"type":"string"}}}`),
	}, Handler: func(_ context.Context, c sdk.Call) (any, error) {
		return map[string]any{"value": "entry " + c.Payload["name"].(string)}, nil
	}}, {Contract: contracts.Contract{
		Tool: "vault.audit", Service: "vault", Description: "List vault accesses", RiskLevel: contracts.RiskRead,
		ScopesRequired: []string{"vault:audit"},
		InputSchema:    schema(`{"type":"object"}`), OutputSchema: schema(`{"type":"object"}`),
	}, Handler: func(context.Context, sdk.Call) (any, error) { return map[string]any{"accesses": 1}, nil }}}
}

// listChanged counts tools/list_changed notifications a client receives.
type listChanged struct {
	mu sync.Mutex
	n  int
}

func (l *listChanged) on(n mcp.JSONRPCNotification) {
	if n.Method == mcp.MethodNotificationToolsListChanged {
		l.mu.Lock()
		l.n++
		l.mu.Unlock()
	}
}

func (l *listChanged) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func listTools(t *testing.T, c *client.Client) map[string]mcp.Tool {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]mcp.Tool{}
	for _, tool := range res.Tools {
		out[tool.Name] = tool
	}
	return out
}

// runRecord returns a stored run's full record through run_status.
func runRecord(t *testing.T, c *client.Client, id any) map[string]any {
	t.Helper()
	return call(t, c, "run_status", map[string]any{"run_id": id})
}

// latestGatewayRun finds the newest gateway record of tool in list_runs.
func latestGatewayRun(t *testing.T, c *client.Client, tool string) map[string]any {
	t.Helper()
	list := call(t, c, "list_runs", map[string]any{"limit": 50})
	for _, r := range list["runs"].([]any) {
		if run := r.(map[string]any); run["goal"] == "gateway call "+tool {
			return runRecord(t, c, run["id"])
		}
	}
	t.Fatalf("no gateway record of %s in list_runs: %v", tool, list)
	return nil
}

// Catalog tools are published with annotations from their contracts,
// under names that cannot clash with Ordo's own tools, and follow the
// catalog live with tools/list_changed.
func TestGatewayPublishesCatalog(t *testing.T) {
	e := newGatewayEnv(t, agent.Config{})
	var lc listChanged
	c := e.stdioClient(t, clientOpts{onNotif: lc.on})
	tools := listTools(t, c)
	for name, want := range map[string]struct{ read, destructive bool }{
		"text__upper": {true, false}, "notes__delete": {false, true}, "vault__read": {true, false},
	} {
		tool, ok := tools[name]
		if !ok {
			t.Fatalf("%s not published: %v", name, slices.Collect(maps.Keys(tools)))
		}
		a := tool.Annotations
		if *a.ReadOnlyHint != want.read || *a.DestructiveHint != want.destructive || a.IdempotentHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s annotations %+v", name, a)
		}
		if tool.Meta == nil || tool.Meta.AdditionalFields["ordo/tool"] != strings.ReplaceAll(name, "__", ".") {
			t.Errorf("%s meta %+v", name, tool.Meta)
		}
	}
	for _, own := range []string{"plan", "execute", "approve", "run_status", "list_runs", "search_tools", "call_tool"} {
		if _, ok := tools[own]; !ok {
			t.Errorf("own tool %s missing", own)
		}
		if strings.Contains(own, "__") {
			t.Errorf("own tool %s uses the published-name separator", own)
		}
	}
	if got := tools["text__upper"].OutputSchema; got.Type != "object" || got.Properties["upper"] == nil {
		t.Errorf("output schema not published: %+v", got)
	}

	// Hot add and remove reach the connected client.
	p, err := host.InProcess(sdk.Tool{Contract: contracts.Contract{
		Tool: "clock.now", Service: "clock", Description: "The time", RiskLevel: contracts.RiskRead,
		InputSchema: schema(`{}`), OutputSchema: schema(`{}`),
	}, Handler: func(context.Context, sdk.Call) (any, error) { return "12:00", nil }})
	if err != nil {
		t.Fatal(err)
	}
	before := lc.count()
	if err := e.host.AddProvider(context.Background(), "clock", "v1", p); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "list_changed after add", func() bool { return lc.count() > before })
	tools = listTools(t, c)
	if _, ok := tools["clock__now"]; !ok {
		t.Fatal("added tool not listed")
	}
	// A result that is not an object comes back as {"result": ...}.
	if got := call(t, c, "clock__now", nil); got["result"] != "12:00" {
		t.Fatalf("clock__now: %v", got)
	}
	before = lc.count()
	if err := e.host.RemoveSource(context.Background(), "clock"); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "list_changed after remove", func() bool { return lc.count() > before })
	if _, ok := listTools(t, c)["clock__now"]; ok {
		t.Fatal("removed tool still listed")
	}
}

// A read tool goes straight through and is in the audit trail with its
// secret redacted; call_tool reaches the same tools by catalog id.
func TestGatewayReadToolAudited(t *testing.T) {
	e := newGatewayEnv(t, agent.Config{})
	c := e.stdioClient(t, clientOpts{})
	got := call(t, c, "vault__read", map[string]any{"name": "db", "api_key": "sk-very-secret"})
	if got["value"] != "entry db" {
		t.Fatalf("vault__read: %v", got)
	}
	rec := latestGatewayRun(t, c, "vault.read")
	raw, _ := json.Marshal(rec)
	if strings.Contains(string(raw), "sk-very-secret") {
		t.Fatalf("the secret reached the audit record: %s", raw)
	}
	steps := rec["steps"].([]any)
	step := steps[0].(map[string]any)
	if rec["status"] != "completed" || rec["user_id"] != "local" || len(steps) != 1 || step["status"] != "succeeded" ||
		!strings.Contains(string(mustJSON(t, step["payload"])), `"name":"db"`) || step["result"].(map[string]any)["value"] != "entry db" {
		t.Fatalf("audit record: %s", raw)
	}
	if pol := rec["policy"].(map[string]any)["a1"].(map[string]any); pol["decision"] != "allow" {
		t.Fatalf("policy in record: %v", pol)
	}

	if got := call(t, c, "call_tool", map[string]any{"tool": "text.upper", "arguments": map[string]any{"text": "hi"}}); got["upper"] != "HI" {
		t.Fatalf("call_tool: %v", got)
	}
	if rec := latestGatewayRun(t, c, "text.upper"); rec["status"] != "completed" {
		t.Fatalf("call_tool record: %v", rec)
	}
	// A bad payload fails contract validation and is recorded as failed.
	code, sc := toolError(t, c, "call_tool", map[string]any{"tool": "text.upper", "arguments": map[string]any{"text": 7}})
	if code != contracts.CodeSchemaViolation {
		t.Fatalf("bad payload: %d %v", code, sc)
	}
	runID := sc["details"].(map[string]any)["run_id"]
	if rec := runRecord(t, c, runID); rec["status"] != "failed" || rec["error"].(map[string]any)["code"].(float64) != float64(contracts.CodeSchemaViolation) {
		t.Fatalf("failed call record: %v", rec)
	}
	if code, _ := toolError(t, c, "call_tool", map[string]any{"tool": "nope.nothing"}); code != contracts.CodeUnknownTool {
		t.Fatalf("unknown tool: %d", code)
	}
}

// A destructive tool called directly by a client that cannot be asked
// inline is sent to approval: a run waits, approve runs it.
func TestGatewayDestructiveSentToApproval(t *testing.T) {
	e := newGatewayEnv(t, agent.Config{})
	c := e.stdioClient(t, clientOpts{})
	code, sc := toolError(t, c, "notes__delete", map[string]any{"id": "n1"})
	if code != contracts.CodeApprovalRequired || !strings.Contains(sc["message"].(string), "approve") {
		t.Fatalf("direct destructive call: %d %v", code, sc)
	}
	if len(e.deletedIDs()) != 0 {
		t.Fatal("the note was deleted before approval")
	}
	runID := sc["details"].(map[string]any)["run_id"]
	out := call(t, c, "approve", map[string]any{"run_id": runID, "decision": "approve"})
	if out["status"] != "completed" || !slices.Equal(e.deletedIDs(), []string{"n1"}) {
		t.Fatalf("approve: %v, deleted %v", out, e.deletedIDs())
	}
	rec := runRecord(t, c, runID)
	if ds := rec["decisions"].([]any); len(ds) != 1 || ds[0].(map[string]any)["decision"].(map[string]any)["by"] != "local" {
		t.Fatalf("decisions: %v", rec["decisions"])
	}
}

// With elicitation the person is asked inline: approve runs the tool,
// reject or decline does not; both are in the audit trail.
func TestGatewayConfirmsInline(t *testing.T) {
	e := newGatewayEnv(t, agent.Config{})
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			answer := "approve"
			h := &elicitor{answer: func(p mcp.ElicitationParams) *mcp.ElicitationResult {
				if answer == "decline" {
					return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}
				}
				return accept(map[string]any{"decision": answer, "note": "checked"})
			}}
			c := e.stdioClient(t, clientOpts{legacy: era.legacy, opts: []client.ClientOption{client.WithElicitationHandler(h)}})
			id := "inline-" + era.name
			if got := call(t, c, "notes__delete", map[string]any{"id": id}); got["deleted"] != id {
				t.Fatalf("approved: %v", got)
			}
			h.mu.Lock()
			seen := slices.Clone(h.seen)
			h.mu.Unlock()
			if len(seen) != 1 || !strings.Contains(seen[0].Message, "notes.delete") || !strings.Contains(seen[0].Message, id) {
				t.Fatalf("question: %+v", seen)
			}
			rec := latestGatewayRun(t, c, "notes.delete")
			d := rec["decisions"].([]any)[0].(map[string]any)["decision"].(map[string]any)
			if rec["status"] != "completed" || d["decision"] != "approve" || d["by"] != "local" || d["note"] != "checked" {
				t.Fatalf("approved record: %v", rec)
			}
			for _, answer = range []string{"reject", "decline"} {
				code, sc := toolError(t, c, "call_tool", map[string]any{"tool": "notes.delete", "arguments": map[string]any{"id": "keep-" + answer}})
				if code != contracts.CodeRejected {
					t.Fatalf("%s: %d %v", answer, code, sc)
				}
				rec := runRecord(t, c, sc["details"].(map[string]any)["run_id"])
				if rec["status"] != "rejected" || rec["steps"] != nil {
					t.Fatalf("%s record: %v", answer, rec)
				}
			}
			if slices.Contains(e.deletedIDs(), "keep-reject") || slices.Contains(e.deletedIDs(), "keep-decline") {
				t.Fatalf("a refused call ran: %v", e.deletedIDs())
			}
		})
	}
}

// A tenant that denies destructive tools gets a coded refusal, recorded.
func TestGatewayDenied(t *testing.T) {
	e := newGatewayEnv(t, agent.Config{Policy: policy.Config{DenyDestructive: true}})
	c := e.stdioClient(t, clientOpts{})
	code, sc := toolError(t, c, "notes__delete", map[string]any{"id": "n1"})
	if code != contracts.CodePolicyDenied || len(e.deletedIDs()) != 0 {
		t.Fatalf("denied: %d %v", code, sc)
	}
	rec := runRecord(t, c, sc["details"].(map[string]any)["run_id"])
	if rec["status"] != "failed" || rec["policy"].(map[string]any)["a1"].(map[string]any)["decision"] != "deny" || rec["steps"] != nil {
		t.Fatalf("denied record: %v", rec)
	}
}

func (e *env) deletedIDs() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.deleted)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Scopes a tool requires come from Gateway.Scopes for the caller: the
// stdio user holds vault:audit, the HTTP user ada does not. Ada is not
// shown the tool (tools/list, search_tools), cannot call its published
// name (not found, as for any tool not listed to her) nor read it in
// ordo://catalog, and call_tool is
// denied with 2010 and recorded.
func TestGatewayCallerScopes(t *testing.T) {
	e := newGatewayEnvWith(t, agent.Config{}, func(user string) []string {
		if user == "local" {
			return []string{"vault:audit"}
		}
		return nil
	})
	local := e.stdioClient(t, clientOpts{})
	if got := call(t, local, "vault__audit", nil); got["accesses"] != float64(1) {
		t.Fatalf("local: %v", got)
	}
	if _, ok := listTools(t, local)["vault__audit"]; !ok {
		t.Fatal("vault__audit is not listed to local, who holds its scope")
	}
	ada := httpClient(t, e.httpServer(t).URL, adminToken, clientOpts{})
	if tools := listTools(t, ada); tools["vault__audit"].Name != "" || tools["vault__read"].Name == "" {
		t.Fatalf("ada's tools: %v", slices.Collect(maps.Keys(tools)))
	}
	for who, c := range map[string]*client.Client{"local": local, "ada": ada} {
		hits := call(t, c, "search_tools", map[string]any{"query": "vault accesses audit", "k": 50})["hits"].([]any)
		found := slices.ContainsFunc(hits, func(h any) bool { return h.(map[string]any)["tool"] == "vault.audit" })
		if found != (who == "local") {
			t.Errorf("search_tools for %s: vault.audit found %v", who, found)
		}
	}
	for who, c := range map[string]*client.Client{"local": local, "ada": ada} {
		res, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "ordo://catalog"}})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Contents[0].(mcp.TextResourceContents).Text; strings.Contains(text, "vault.audit") != (who == "local") {
			t.Errorf("ordo://catalog for %s: %.300s", who, text)
		}
	}
	if res, err := callRaw(ada, "vault__audit", nil, nil); err == nil {
		t.Fatalf("ada called vault__audit: %v", res)
	}
	code, sc := toolError(t, ada, "call_tool", map[string]any{"tool": "vault.audit"})
	if code != contracts.CodePolicyDenied || !strings.Contains(sc["message"].(string), "vault:audit") {
		t.Fatalf("ada: %d %v", code, sc)
	}
	if rec := latestGatewayRun(t, ada, "vault.audit"); rec["status"] != "failed" {
		t.Fatalf("ada's denied call: %v", rec)
	}
}

// No spelling of a catalog id but its own reaches the tool: case, a
// trailing space, a zero-width or look-alike letter, the published form
// given to call_tool, the catalog form given to tools/call. Each is
// refused as unknown (1003, or MCP's not found), and no run is recorded.
func TestGatewayNameTricks(t *testing.T) {
	e := newGatewayEnvWith(t, agent.Config{}, func(string) []string { return nil })
	c := httpClient(t, e.httpServer(t).URL, adminToken, clientOpts{})
	for _, name := range []string{"VAULT.audit", "vault.audit ", " vault.audit", "vault.audit\u200b", "v\u0430ult.audit",
		"vault__audit", "vault. audit", "vault.audit\x00", "vault..audit", "vault.*", "vault."} {
		code, body := toolError(t, c, "call_tool", map[string]any{"tool": name, "arguments": map[string]any{}})
		if code != contracts.CodeUnknownTool {
			t.Errorf("call_tool %q: %d %v, want %d", name, code, body, contracts.CodeUnknownTool)
		}
	}
	for _, name := range []string{"VAULT__audit", "vault__audit ", "vault.audit", "vault___audit", "vault__Audit"} {
		if res, err := callRaw(c, name, map[string]any{}, nil); err == nil {
			t.Errorf("tools/call %q: %v, want not found", name, res)
		}
	}
	if runs := call(t, c, "list_runs", map[string]any{"user": "*"})["runs"].([]any); len(runs) != 0 {
		t.Fatalf("refused names left runs: %v", runs)
	}
}

// scriptedCatalog is the host's catalog with its change events sent by
// the test.
type scriptedCatalog struct {
	*host.Host
	events chan host.CatalogEvent
}

func (s scriptedCatalog) Subscribe(context.Context) <-chan host.CatalogEvent { return s.events }

// TestGatewayComparesTheCarriedHash: the gateway republishes a tool only
// when the event's hash differs from the one it published: an event under
// the same hash changes nothing (even with a contract that differs, which
// the catalog would never send under one hash), a new hash republishes.
func TestGatewayComparesTheCarriedHash(t *testing.T) {
	e, h, rec := newStack(t, agent.Config{}, []host.Option{host.WithLogger(slog.New(slog.DiscardHandler))}, vaultTools()...)
	e.engine = agent.New(agent.Config{}, agent.Deps{Tools: h, Store: e.store, Recommender: rec})
	cat := scriptedCatalog{Host: h, events: make(chan host.CatalogEvent, 4)}
	var err error
	e.srv, err = mcpserver.New(mcpserver.Options{Engine: e.engine, Runs: e.store, Catalog: h, Admin: h, Version: "test",
		Gateway: &mcpserver.Gateway{Tools: cat}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.srv.Close() })
	t.Cleanup(func() { close(cat.events) }) // runs first: lets Close end the gateway's loop
	c := e.stdioClient(t, clientOpts{})
	read, ok := h.Lookup("vault.read")
	if !ok {
		t.Fatal("vault.read not in the catalog")
	}
	edited := read.Contract
	edited.Description = "Read a vault entry, edited"
	clock := contracts.Contract{Tool: "clock.now", Service: "clock", Description: "The time", RiskLevel: contracts.RiskRead,
		InputSchema: schema(`{}`), OutputSchema: schema(`{}`)}
	cat.events <- host.CatalogEvent{Kind: host.Changed, Tool: read.Name(), Contract: edited, Hash: read.Hash()}
	cat.events <- host.CatalogEvent{Kind: host.Added, Tool: clock.Tool, Contract: clock, Hash: clock.Hash()}
	testwait.Until(t, 30*time.Second, "clock__now published", func() bool { _, ok := listTools(t, c)["clock__now"]; return ok })
	if got := listTools(t, c)["vault__read"].Description; strings.HasPrefix(got, edited.Description) {
		t.Fatalf("republished under an unchanged hash: %q", got)
	}
	cat.events <- host.CatalogEvent{Kind: host.Changed, Tool: read.Name(), Contract: edited, Hash: edited.Hash()}
	testwait.Until(t, 30*time.Second, "vault__read republished", func() bool {
		return strings.HasPrefix(listTools(t, c)["vault__read"].Description, edited.Description)
	})
}
