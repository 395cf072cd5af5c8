package mcpserver

import (
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// A spent budget is asked as approve (with the new limit) or reject; the
// limit goes to the engine as approve's answers.limit does
// (TestBudgetFormTakesWhatApproveTakes).
func TestElicitBudgetExceeded(t *testing.T) {
	in := &contracts.Interrupt{Kind: contracts.InterruptBudgetExceeded, Message: "a budget is spent",
		Budget: &contracts.BudgetStop{Budget: "run.tokens", Limit: 100, Used: 150, Before: "step"}}
	params := elicitationFor(&contracts.Run{ID: "run_1", Goal: "g", Interrupt: in})
	props := params.RequestedSchema.(map[string]any)["properties"].(map[string]any)
	if _, ok := props["limit"]; !ok {
		t.Fatalf("form %v has no limit field", props)
	}
	d, err := decisionFromElicitation(in, map[string]any{"decision": "approve", "limit": 500.0})
	if err != nil || d.Kind != contracts.DecisionApprove || d.Answers["limit"] != 500.0 {
		t.Errorf("approve with a limit: %+v, %v", d, err)
	}
	if d, err := decisionFromElicitation(in, map[string]any{"decision": "reject"}); err != nil || d.Kind != contracts.DecisionReject {
		t.Errorf("reject: %+v, %v", d, err)
	}
	if d, err := decisionFromElicitation(in, map[string]any{"decision": "approve", "limit": "500"}); err != nil || d.Answers["limit"] != "500" {
		t.Errorf("approve with a numeric string: %+v, %v (the engine reads it)", d, err)
	}
	wall := &contracts.Interrupt{Kind: contracts.InterruptBudgetExceeded, Budget: &contracts.BudgetStop{Budget: "run.wall_time", Limit: 60, Used: 61}}
	limit := elicitationFor(&contracts.Run{ID: "run_1", Interrupt: wall}).RequestedSchema.(map[string]any)["properties"].(map[string]any)["limit"].(map[string]any)
	if limit["type"] != "string" {
		t.Errorf("wall_time limit field %v: a duration such as 30m must fit it", limit)
	}
}
