package mcpserver

import (
	"slices"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// step_failed and paused are asked with their decisions; a retry's
// payload and a paused run's remaining plan come as JSON text, and a
// form that does not fit is refused and decides nothing.
func TestElicitStepFailedAndPaused(t *testing.T) {
	failed := &contracts.Interrupt{Kind: contracts.InterruptStepFailed, Message: "a failed", ActionID: "a", Tool: "x.y",
		Error: &contracts.Error{Code: contracts.CodeToolFailed, Message: "down"}}
	params := elicitationFor(&contracts.Run{ID: "run_1", Goal: "g", Interrupt: failed})
	props := params.RequestedSchema.(map[string]any)["properties"].(map[string]any)
	if enum, _ := props["decision"].(map[string]any)["enum"].([]string); !slices.Equal(enum, []string{"retry", "skip", "replan", "abort"}) {
		t.Fatalf("step_failed decisions %v", enum)
	}
	d, err := decisionFromElicitation(failed, map[string]any{"decision": "retry", "payload": `{"q":2}`})
	if err != nil || d.Kind != contracts.DecisionRetry || string(d.Payload) != `{"q":2}` {
		t.Errorf("retry with a payload: %+v %v", d, err)
	}
	for _, form := range []map[string]any{{"decision": "continue"}, {"decision": "retry", "payload": "{bad"}} {
		if _, err := decisionFromElicitation(failed, form); contracts.CodeOf(err) != contracts.CodeInvalidDecision {
			t.Errorf("%v accepted: %v", form, err)
		}
	}

	paused := &contracts.Interrupt{Kind: contracts.InterruptPaused, Message: "paused"}
	params = elicitationFor(&contracts.Run{ID: "run_1", Goal: "g", Interrupt: paused})
	if _, ok := params.RequestedSchema.(map[string]any)["properties"].(map[string]any)["plan"]; !ok {
		t.Fatal("the paused form has no plan field")
	}
	if d, err := decisionFromElicitation(paused, map[string]any{"decision": "continue"}); err != nil || d.Kind != contracts.DecisionContinue {
		t.Errorf("continue: %+v %v", d, err)
	}
	plan := `{"version":"1.0","goal":"g","timezone":"UTC","actions":[{"id":"a","tool":"x.y","intent":"read","requires":[],"produces":[]}]}`
	if d, err := decisionFromElicitation(paused, map[string]any{"decision": "edit", "plan": plan}); err != nil || d.Plan == nil || len(d.Plan.Actions) != 1 {
		t.Errorf("edit: %+v %v", d, err)
	}
	if _, err := decisionFromElicitation(paused, map[string]any{"decision": "edit"}); contracts.CodeOf(err) != contracts.CodeInvalidDecision {
		t.Errorf("edit without a plan: %v", err)
	}
}
