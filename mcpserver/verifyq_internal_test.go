package mcpserver

import (
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// The critic's question is asked as answer (with the answer field),
// approve (keep the result) or reject; an answer without text is refused.
func TestElicitVerifyQuestion(t *testing.T) {
	in := &contracts.Interrupt{Kind: contracts.InterruptVerifyQuestion, Message: "the critic asks", Questions: []string{"Which season?"},
		ActionID: "g1", Tool: "llm.generate", Payload: []byte(`{"text":"draft"}`)}
	params := elicitationFor(&contracts.Run{ID: "run_1", Goal: "g", Interrupt: in})
	props := params.RequestedSchema.(map[string]any)["properties"].(map[string]any)
	if props["a1"].(map[string]any)["title"] != "Which season?" || props["decision"] == nil {
		t.Fatalf("form %v", props)
	}
	d, err := decisionFromElicitation(in, map[string]any{"decision": "answer", "a1": "winter"})
	if err != nil || d.Kind != contracts.DecisionAnswer || d.Answers["Which season?"] != "winter" {
		t.Errorf("answer: %+v, %v", d, err)
	}
	if d, err := decisionFromElicitation(in, map[string]any{"decision": "approve"}); err != nil || d.Kind != contracts.DecisionApprove {
		t.Errorf("approve: %+v, %v", d, err)
	}
	for _, form := range []map[string]any{{"decision": "answer"}, {"decision": "skip"}} {
		if _, err := decisionFromElicitation(in, form); contracts.CodeOf(err) != contracts.CodeInvalidDecision {
			t.Errorf("%v: %v", form, err)
		}
	}
}

// A remembered answer is the clarify form field's default.
func TestElicitClarifySuggestionIsDefault(t *testing.T) {
	in := &contracts.Interrupt{Kind: contracts.InterruptClarify, Message: "ambiguous", Questions: []string{"Which city?", "When?"},
		Suggestions: map[string]string{"Which city?": "Seoul"}}
	props := elicitationFor(&contracts.Run{ID: "run_1", Goal: "g", Interrupt: in}).RequestedSchema.(map[string]any)["properties"].(map[string]any)
	if props["a1"].(map[string]any)["default"] != "Seoul" {
		t.Fatalf("a1 = %v", props["a1"])
	}
	if _, ok := props["a2"].(map[string]any)["default"]; ok {
		t.Fatalf("a2 has a default: %v", props["a2"])
	}
}
