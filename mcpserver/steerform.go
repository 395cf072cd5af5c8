package mcpserver

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// steerForm fills the elicitation form of a step_failed or paused
// interrupt: the decision, and the JSON an edit or a retry may carry (a
// flat form has no object fields, so it is text).
func steerForm(run *contracts.Run, props map[string]any, msg *strings.Builder) []string {
	in := run.Interrupt
	props["decision"] = map[string]any{"type": "string", "title": "Decision", "enum": decisionNames(in.Kind)}
	if in.Kind == contracts.InterruptStepFailed {
		fmt.Fprintf(msg, "Step %s (%s) was called with %s\n", in.ActionID, in.Tool, string(in.Payload))
		props["payload"] = map[string]any{"type": "string", "title": "Payload for the retry (optional JSON object)"}
	} else {
		if n := len(run.Plans); n > 0 {
			for i, a := range run.Plans[n-1].Plan.Actions {
				fmt.Fprintf(msg, "%d. %s: %s (%s)\n", i+1, a.ID, a.Tool, a.Intent)
			}
		}
		props["plan"] = map[string]any{"type": "string", "title": "The remaining plan (edit: an Action Plan in JSON)"}
	}
	return []string{"decision"}
}

// decisionFromSteerForm reads a step_failed or paused form; the engine
// checks the payload and plan as for approve.
func decisionFromSteerForm(in *contracts.Interrupt, form map[string]any, note string) (contracts.Decision, error) {
	kind, _ := form["decision"].(string)
	d := contracts.Decision{Kind: contracts.DecisionKind(kind), Note: note}
	bad := func(field, why string) (contracts.Decision, error) {
		return contracts.Decision{}, contracts.Errorf(contracts.CodeInvalidDecision, "approval form: %s %s", field, why).
			With("field", field).With("interrupt", string(in.Kind))
	}
	if !slices.Contains(agent.Decisions(in.Kind), d.Kind) {
		return bad("decision", fmt.Sprintf("%q does not answer a %s", kind, in.Kind))
	}
	if text, _ := form["payload"].(string); strings.TrimSpace(text) != "" && d.Kind == contracts.DecisionRetry {
		if !json.Valid([]byte(text)) {
			return bad("payload", "is not JSON")
		}
		d.Payload = json.RawMessage(text)
	}
	if d.Kind == contracts.DecisionEdit {
		text, _ := form["plan"].(string)
		if strings.TrimSpace(text) == "" {
			return bad("plan", "is missing: an edit needs the remaining plan")
		}
		p, err := contracts.ParsePlan([]byte(text))
		if err != nil {
			return contracts.Decision{}, err
		}
		d.Plan = p
	}
	return d, nil
}
