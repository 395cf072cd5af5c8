package mcpserver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/ordo-run/ordo/contracts"
)

// transports runs fn against a client over stdio and over streamable HTTP.
func transports(t *testing.T, e *env, co clientOpts, fn func(t *testing.T, c *client.Client)) {
	t.Run("stdio", func(t *testing.T) { fn(t, e.stdioClient(t, co)) })
	t.Run("http", func(t *testing.T) { fn(t, httpClient(t, e.httpServer(t).URL, userToken, co)) })
}

func TestPlanApproveExecute(t *testing.T) {
	e := newEnv(t)
	transports(t, e, clientOpts{}, func(t *testing.T, c *client.Client) {
		planned := call(t, c, "plan", map[string]any{"plan": upperPlan("hello")})
		if planned["status"] != "awaiting_approval" || planned["mermaid"] == "" || planned["plan"] == nil {
			t.Fatalf("plan: %v", planned)
		}
		runID := planned["run_id"].(string)

		// Executing before the approval is refused and changes nothing.
		code, _ := toolError(t, c, "execute", map[string]any{"run_id": runID})
		if code != contracts.CodeInvalidInput {
			t.Fatalf("execute before approval: code %d", code)
		}
		done := call(t, c, "approve", map[string]any{"run_id": runID, "decision": "approve"})
		if done["status"] != "completed" {
			t.Fatalf("approve: %v", done)
		}
		steps := done["steps"].([]any)
		if len(steps) != 1 || steps[0].(map[string]any)["status"] != "succeeded" {
			t.Fatalf("steps: %v", steps)
		}
		rec := call(t, c, "run_status", map[string]any{"run_id": runID})
		state := rec["state"].(map[string]any)
		if state["upper"] != "HELLO" || len(rec["decisions"].([]any)) != 1 {
			t.Fatalf("record: state %v decisions %v", state, rec["decisions"])
		}

		// Auto-approved: plan stops at ready, execute runs it.
		ready := call(t, c, "plan", map[string]any{"plan": upperPlan("again"), "options": map[string]any{"auto_approve": true}})
		if ready["status"] != "ready" {
			t.Fatalf("plan with auto_approve: %v", ready)
		}
		ran := call(t, c, "execute", map[string]any{"run_id": ready["run_id"]})
		if ran["status"] != "completed" || ran["result"].(map[string]any)["answer"] == "" {
			t.Fatalf("execute: %v", ran)
		}
	})
}

func TestInterruptedRunApproved(t *testing.T) {
	e := newEnv(t)
	noPlanApproval := map[string]any{"hitl": map[string]any{"enabled": true, "plan_approval": false}}
	transports(t, e, clientOpts{}, func(t *testing.T, c *client.Client) {
		id := "note-" + t.Name()
		out := call(t, c, "execute", map[string]any{"plan": deletePlan(id), "options": noPlanApproval})
		in, _ := out["interrupt"].(map[string]any)
		if out["status"] != "interrupted" || in["kind"] != "step_approval" || in["action_id"] != "a2" {
			t.Fatalf("execute: %v", out)
		}
		if !slices.Contains(toStrings(in["decisions"]), "skip") {
			t.Fatalf("decisions: %v", in["decisions"])
		}
		// A decision that does not fit is refused; the run still waits.
		code, _ := toolError(t, c, "approve", map[string]any{"run_id": out["run_id"], "decision": "answer", "answers": map[string]any{"x": 1}})
		if code != contracts.CodeInvalidDecision {
			t.Fatalf("bad decision: code %d", code)
		}
		done := call(t, c, "approve", map[string]any{"run_id": out["run_id"], "decision": "approve", "note": "fine"})
		if done["status"] != "completed" {
			t.Fatalf("approve: %v", done)
		}
		e.mu.Lock()
		deleted := slices.Contains(e.deleted, strings.ToUpper(id))
		e.mu.Unlock()
		if !deleted {
			t.Fatalf("the approved delete did not run: %v", e.deleted)
		}
	})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
