package mcpserver

import (
	"fmt"
	"strings"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// withSuggestion makes a remembered answer the form field's default, so
// the person confirms it rather than types it again.
func withSuggestion(field map[string]any, suggestion string) map[string]any {
	if suggestion != "" {
		field["default"] = suggestion
	}
	return field
}

// verifyQuestionForm is the elicitation form for the critic's question:
// answer it (a1), keep the result (approve) or reject the run.
func verifyQuestionForm(in *contracts.Interrupt, props map[string]any, msg *strings.Builder) []string {
	fmt.Fprintf(msg, "Step %s (%s) returned %s\n", in.ActionID, in.Tool, string(in.Payload))
	props["decision"] = map[string]any{"type": "string", "title": "Decision", "enum": []string{"answer", "approve", "reject"},
		"description": "answer: the step is tried again with your answer; approve: keep this result"}
	title := "Your answer"
	if len(in.Questions) > 0 {
		title = in.Questions[0]
	}
	props[fieldKey(0)] = map[string]any{"type": "string", "title": title}
	return []string{"decision"}
}

// decisionFromVerifyForm reads the verify_question form back.
func decisionFromVerifyForm(in *contracts.Interrupt, form map[string]any, note string) (contracts.Decision, error) {
	kind, _ := form["decision"].(string)
	d := contracts.Decision{Kind: contracts.DecisionKind(kind), Note: note}
	switch d.Kind {
	case contracts.DecisionApprove, contracts.DecisionReject:
		return d, nil
	case contracts.DecisionAnswer:
		a, _ := form[fieldKey(0)].(string)
		if strings.TrimSpace(a) == "" {
			return d, contracts.Errorf(contracts.CodeInvalidDecision, "approval form: %s is missing (answers the critic's question)", fieldKey(0)).
				With("field", fieldKey(0)).With("interrupt", string(in.Kind))
		}
		q := "answer"
		if len(in.Questions) > 0 {
			q = in.Questions[0]
		}
		d.Answers = map[string]any{q: a}
		return d, nil
	}
	return d, contracts.Errorf(contracts.CodeInvalidDecision, "approval form: decision %q does not answer a %s", kind, in.Kind).
		With("field", "decision").With("interrupt", string(in.Kind))
}

// decisionNames are the decisions approve accepts for an interrupt kind,
// as the engine lists them.
func decisionNames(k contracts.InterruptKind) []string {
	var out []string
	for _, d := range agent.Decisions(k) {
		out = append(out, string(d))
	}
	return out
}
