package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
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
