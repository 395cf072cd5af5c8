package mcpserver_test

import (
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// An MCP caller's options.auto_approve answers the step approvals that
// configuration asks for, never a policy require_confirm: the delete that
// policy confirms stops the run at its step approval, nothing deleted.
// The field that would answer policy (auto_approve_policy) is refused.
func TestCallerAutoApproveLeavesPolicyToThePerson(t *testing.T) {
	cfg := agent.DefaultConfig()
	cfg.HITL.StepApproval = true
	e := newEnv(t, withConfig(cfg))
	auto := map[string]any{"auto_approve": true}
	transports(t, e, clientOpts{}, func(t *testing.T, c *client.Client) {
		done := call(t, c, "execute", map[string]any{"plan": upperPlan("configured"), "options": auto})
		if done["status"] != "completed" {
			t.Fatalf("a configured step approval was not answered: %v", done)
		}
		stopped := call(t, c, "execute", map[string]any{"plan": deletePlan("kept-" + t.Name()), "options": auto})
		in, _ := stopped["interrupt"].(map[string]any)
		if stopped["status"] != "interrupted" || in["kind"] != string(contracts.InterruptStepApproval) || in["action_id"] != "a2" {
			t.Fatalf("policy confirmation answered by auto_approve: %v", stopped)
		}
		if deleted := e.deletedIDs(); len(deleted) != 0 {
			t.Fatalf("deleted %v without the person", deleted)
		}
		code, body := toolError(t, c, "execute", map[string]any{"plan": deletePlan("x"), "options": map[string]any{"auto_approve": true, "auto_approve_policy": true}})
		if code != contracts.CodeInvalidInput {
			t.Fatalf("auto_approve_policy from a caller: %d %v", code, body)
		}
	})
}
