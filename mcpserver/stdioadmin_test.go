package mcpserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/mcpserver"
)

var adminTools = []string{"add_plugin", "add_upstream", "remove_plugin", "list_plugins"}

// A stdio client without the admin role (the default, and what `ordo
// serve` gives it unless mcp.stdio_admin is on) is not offered the admin tools, and a call is
// 2003 saying how to turn them on; HTTP admins keep them.
func TestStdioAdminToolsOff(t *testing.T) {
	e, h, rec := newStack(t, agent.DefaultConfig(), nil)
	eng := agent.New(agent.DefaultConfig(), agent.Deps{Tools: h, Store: e.store, Recommender: rec})
	var err error
	e.srv, err = mcpserver.New(mcpserver.Options{Engine: eng, Runs: e.store, Catalog: h, Admin: h,
		Tokens: []mcpserver.Token{{Token: adminToken, Identity: mcpserver.Identity{User: "ada", Roles: []string{mcpserver.RoleAdmin}}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := e.stdioClient(t, clientOpts{})
	names := testmcp.ToolNames(t, c)
	for _, tool := range adminTools {
		if slices.Contains(names, tool) {
			t.Errorf("the stdio client is offered %s", tool)
		}
	}
	if !slices.Contains(names, "execute") {
		t.Fatalf("tools %v", names)
	}
	for _, tool := range adminTools {
		res, err := callRaw(c, tool, map[string]any{"name": "calc", "mcp_url": "http://127.0.0.1:1/mcp"}, nil)
		if err == nil || !strings.Contains(err.Error(), "ordo 2003") || !strings.Contains(err.Error(), "mcp.stdio_admin: true") {
			t.Errorf("%s on stdio: %v %+v, want 2003 saying how to turn the admin tools on", tool, err, res)
		}
	}
	admin := httpClient(t, e.httpServer(t).URL, adminToken, clientOpts{})
	names = testmcp.ToolNames(t, admin)
	for _, tool := range adminTools {
		if !slices.Contains(names, tool) {
			t.Errorf("the HTTP admin lost %s", tool)
		}
	}
}

// With the admin tools on for stdio, add_upstream and add_plugin ask the
// person first, showing exactly what would run or be reached: decline or
// reject adds nothing, approve adds; a client that cannot ask is refused.
// Both protocol eras (2026-07-28 multi round-trip, and elicitation/create
// through mcp-go's bridge).
func TestStdioAdminAsksThePerson(t *testing.T) {
	t.Setenv("ORDO_TEST_CALC_TOKEN", calcToken)
	calc := newCalcUpstream(t)
	args := map[string]any{"name": "calc", "mcp_url": calc.url(), "bearer_token_env": "ORDO_TEST_CALC_TOKEN"}
	// Each client gets its own server: mcp-go's stdio session is process-wide.
	// The default stdio identity holds the admin role.
	mounted := func(e *env) bool { _, ok := e.host.Lookup("calc.add"); return ok }

	t.Run("no elicitation", func(t *testing.T) {
		e := newEnv(t)
		c := e.stdioClient(t, clientOpts{})
		if code, body := toolError(t, c, "add_upstream", args); code != contracts.CodeApprovalRequired || mounted(e) {
			t.Fatalf("without elicitation: %d %v (mounted %v)", code, body, mounted(e))
		}
	})

	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			e := newEnv(t)
			var answer *mcp.ElicitationResult
			h := &elicitor{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult { return answer }}
			c := e.stdioClient(t, clientOpts{legacy: era.legacy, opts: []client.ClientOption{client.WithElicitationHandler(h)}})
			for _, a := range []*mcp.ElicitationResult{
				{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}},
				{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}},
				accept(map[string]any{"decision": "reject"}),
			} {
				answer = a
				if code, body := toolError(t, c, "add_upstream", args); code != contracts.CodeRejected || mounted(e) {
					t.Fatalf("answered %s %v: %d %v (mounted %v)", a.Action, a.Content, code, body, mounted(e))
				}
			}
			n := h.count()
			answer = accept(map[string]any{"decision": "approve"})
			out := call(t, c, "add_upstream", args)
			if out["added"] != "calc" || !mounted(e) || h.count() != n+1 {
				t.Fatalf("approved: %v (mounted %v, asked %d times)", out, mounted(e), h.count()-n)
			}
			h.mu.Lock()
			msg := h.seen[len(h.seen)-1].Message
			h.mu.Unlock()
			if !strings.Contains(msg, calc.url()) || !strings.Contains(msg, "ORDO_TEST_CALC_TOKEN") || strings.Contains(msg, calcToken) {
				t.Errorf("question %q: want the URL and the variable, never the token", msg)
			}
		})
	}

	// add_plugin shows the executable and the digest it pins when none is
	// given; declined, nothing starts.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	h := &elicitor{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}
	}}
	e := newEnv(t)
	c := e.stdioClient(t, clientOpts{opts: []client.ClientOption{client.WithElicitationHandler(h)}})
	code, body := toolError(t, c, "add_plugin", map[string]any{"name": "sneaky", "path": exe, "args": []any{"--serve", "a b"}})
	if code != contracts.CodeRejected || len(e.host.Sources()) != 1 {
		t.Fatalf("declined add_plugin: %d %v, sources %v", code, body, e.host.Sources())
	}
	h.mu.Lock()
	msg := h.seen[0].Message
	h.mu.Unlock()
	for _, want := range []string{exe, hex.EncodeToString(sum[:]), `["--serve","a b"]`} {
		if !strings.Contains(msg, want) {
			t.Errorf("question %q lacks %q", msg, want)
		}
	}
}

// Every admin tool that changes something is annotated destructive, so
// clients that ask before destructive calls ask; list_plugins only reads.
func TestAdminToolHints(t *testing.T) {
	e := newEnv(t)
	res, err := httpClient(t, e.httpServer(t).URL, adminToken, clientOpts{}).ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		a := tool.Annotations
		switch tool.Name {
		case "add_plugin", "add_upstream", "remove_plugin":
			if *a.ReadOnlyHint || !*a.DestructiveHint {
				t.Errorf("%s: %+v, want destructive", tool.Name, a)
			}
		case "list_plugins":
			if !*a.ReadOnlyHint {
				t.Errorf("%s: %+v, want read-only", tool.Name, a)
			}
		}
	}
}
