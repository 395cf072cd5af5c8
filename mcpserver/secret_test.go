package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testmcp"
)

// A missing secret field is not asked for by elicitation (MCP forbids
// asking for sensitive values that way): the run waits with a note naming
// the console and the terminal; the value, given with approve, is used
// and recorded redacted.
func TestSecretInputIsNotElicited(t *testing.T) {
	cfg := agent.DefaultConfig()
	cfg.HITL.PlanApproval = false
	e := newGatewayEnv(t, cfg)
	h := &elicitor{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult { return accept(map[string]any{"f0": "x"}) }}
	c := e.stdioClient(t, clientOpts{opts: []client.ClientOption{client.WithElicitationHandler(h)}})
	plan := map[string]any{"version": "1.0", "goal": "read the vault entry", "timezone": "UTC", "actions": []any{
		map[string]any{"id": "r1", "tool": "vault.read", "intent": "read", "requires": []any{}, "produces": []any{}, "inputs": map[string]any{"name": "db"}}}}
	out := call(t, c, "execute", map[string]any{"plan": plan})
	in, _ := out["interrupt"].(map[string]any)
	if out["status"] != "interrupted" || in["kind"] != "input_required" || h.count() != 0 {
		t.Fatalf("want an input_required wait with no elicitation (%d sent): %v", h.count(), out)
	}
	if secret, _ := in["secret"].([]any); len(secret) != 1 || secret[0] != "$.api_key" {
		t.Fatalf("secret = %v", in["secret"])
	}
	if note, _ := out["note"].(string); !strings.Contains(note, "/ui/run?id=") || !strings.Contains(note, "ordo runs resume") {
		t.Fatalf("note = %q", out["note"])
	}
	done := call(t, c, "approve", map[string]any{"run_id": out["run_id"], "decision": "answer", "answers": map[string]any{"$.api_key": "k3y-s3cret"}})
	if done["status"] != "completed" {
		t.Fatalf("approve: %v", done)
	}
	rec := call(t, c, "run_status", map[string]any{"run_id": out["run_id"]})
	if raw, _ := json.Marshal(rec); strings.Contains(string(raw), "k3y-s3cret") || !strings.Contains(string(raw), "entry db") {
		t.Fatalf("record: %s", raw)
	}
}

// A gateway caller who spells a secret field otherwise ("API_KEY" for
// api_key) still has it recorded redacted: the Go plugin's decoder takes
// either spelling for the field.
func TestGatewaySecretSpelledOtherwiseRedacted(t *testing.T) {
	e := newGatewayEnv(t, agent.Config{})
	c := e.stdioClient(t, clientOpts{})
	out := call(t, c, "vault__read", map[string]any{"name": "db", "api_key": "s3cret-lower", "API_KEY": "s3cret-upper"})
	if out["value"] != "entry db" {
		t.Fatalf("vault__read: %v", out)
	}
	raw, _ := json.Marshal(latestGatewayRun(t, c, "vault.read"))
	if strings.Contains(string(raw), "s3cret") || !strings.Contains(string(raw), `"name":"db"`) {
		t.Fatalf("audit record: %s", raw)
	}
}

// An upstream whose schema marks a secret inside an object argument, and
// that repeats it in its error and in its result: the argument is recorded
// redacted whole, and neither the audit record nor what the caller gets
// back holds the secret.
func TestGatewayUpstreamNestedAndRepeatedSecrets(t *testing.T) {
	up := server.NewMCPServer("dbish", "1.0.0")
	up.AddTool(mcp.NewToolWithRawSchema("connect", "Connects to a database.", json.RawMessage(`{"type":"object","required":["db"],"properties":{
	  "db":{"type":"object","properties":{"host":{"type":"string"},"password":{"type":"string","writeOnly":true}}}}}`)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			db, _ := req.GetArguments()["db"].(map[string]any)
			if db["host"] == "down" {
				return mcp.NewToolResultError(fmt.Sprintf("cannot reach %v as admin:%v", db["host"], db["password"])), nil
			}
			return mcp.NewToolResultStructured(map[string]any{"connected": fmt.Sprint(db)}, "ok"), nil
		})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(hs.Close)
	e := newGatewayEnv(t, agent.Config{}, host.WithUpstreams(host.UpstreamSpec{Name: "pg", URL: hs.URL + "/mcp"}))
	c := e.stdioClient(t, clientOpts{})

	out := call(t, c, "pg__connect", map[string]any{"db": map[string]any{"host": "up", "password": "s3cret-nested"}})
	if raw, _ := json.Marshal(out); strings.Contains(string(raw), "s3cret") || !strings.Contains(string(raw), "[REDACTED]") {
		t.Fatalf("the caller got %s", raw)
	}
	raw, _ := json.Marshal(latestGatewayRun(t, c, "pg.connect"))
	if strings.Contains(string(raw), "s3cret") || !strings.Contains(string(raw), `"db":"[REDACTED]"`) {
		t.Fatalf("audit record: %s", raw)
	}

	res, err := callRaw(c, "pg__connect", map[string]any{"db": map[string]any{"host": "down", "password": "s3cret-refused"}}, nil)
	if err != nil || !res.IsError || strings.Contains(testmcp.Text(res), "s3cret") || !strings.Contains(testmcp.Text(res), "admin:[REDACTED]") {
		t.Fatalf("refused connect: %v %+v", err, res)
	}
	raw, _ = json.Marshal(latestGatewayRun(t, c, "pg.connect"))
	if strings.Contains(string(raw), "s3cret") {
		t.Fatalf("audit record: %s", raw)
	}
}
