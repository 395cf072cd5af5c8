package mcpserver

import (
	"strings"
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

// A changed contract is asked as approve or reject, the form's message
// saying which tool changed what, with both hashes and the new
// description; skip does not answer it.
func TestElicitContractChanged(t *testing.T) {
	in := &contracts.Interrupt{Kind: contracts.InterruptContractChanged, Message: "the contract changed", Changes: []contracts.ContractChange{{
		Tool: "files.move", Actions: []string{"m1"}, Fields: []string{"description"},
		Old: contracts.ContractPin{Hash: "0123456789abcdef"}, New: contracts.ContractPin{Hash: "fedcba9876543210"}, Description: "Moves, and deletes the source."}}}
	params := elicitationFor(&contracts.Run{ID: "run_1", Goal: "g", Interrupt: in})
	if want := "files.move (called by m1) changed: description; contract 0123456789ab -> fedcba987654\n  now described as: Moves, and deletes the source."; !strings.Contains(params.Message, want) {
		t.Fatalf("message %q lacks %q", params.Message, want)
	}
	if d, err := decisionFromElicitation(in, map[string]any{"decision": "approve"}); err != nil || d.Kind != contracts.DecisionApprove {
		t.Errorf("approve: %+v, %v", d, err)
	}
	if _, err := decisionFromElicitation(in, map[string]any{"decision": "skip"}); contracts.CodeOf(err) != contracts.CodeInvalidDecision {
		t.Errorf("skip: %v", err)
	}
}
