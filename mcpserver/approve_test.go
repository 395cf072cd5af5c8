package mcpserver_test

import (
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// An approval names the interrupt it answers by its seq: sent twice (a
// client's retry) or late (another person answered first), it is refused
// and cannot approve the next interrupt, which nobody has seen.
func TestApproveWithSeqAnswersThatInterruptOnly(t *testing.T) {
	e := newEnv(t)
	c := e.stdioClient(t, clientOpts{})
	out := call(t, c, "execute", map[string]any{"plan": deletePlan("n1")})
	in := out["interrupt"].(map[string]any)
	if out["status"] != "interrupted" || in["kind"] != "plan_approval" || in["seq"].(float64) < 1 {
		t.Fatalf("execute: %v", out)
	}
	plan := in["seq"]
	out = call(t, c, "approve", map[string]any{"run_id": out["run_id"], "decision": "approve", "seq": plan})
	in = out["interrupt"].(map[string]any)
	if in["kind"] != "step_approval" || in["action_id"] != "a2" || in["seq"] == plan {
		t.Fatalf("approve plan: %v", out)
	}
	code, body := toolError(t, c, "approve", map[string]any{"run_id": out["run_id"], "decision": "approve", "seq": plan})
	if code != contracts.CodeInvalidDecision || body["details"].(map[string]any)["seq"] != in["seq"] {
		t.Fatalf("the plan's approval sent again: %d %v", code, body)
	}
	rec := call(t, c, "run_status", map[string]any{"run_id": out["run_id"]})
	if rec["status"] != "interrupted" || len(rec["decisions"].([]any)) != 1 || len(e.deletedIDs()) != 0 {
		t.Fatalf("a stale approval changed the run: %v, deleted %v", rec, e.deletedIDs())
	}
	out = call(t, c, "approve", map[string]any{"run_id": out["run_id"], "decision": "approve", "seq": in["seq"]})
	if out["status"] != "completed" || len(e.deletedIDs()) != 1 {
		t.Fatalf("approve step: %v, deleted %v", out, e.deletedIDs())
	}
}
