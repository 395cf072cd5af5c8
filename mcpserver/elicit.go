package mcpserver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
)

// elicitationFor asks a person about a run's interrupt with a flat form,
// as MCP elicitation requires: a decision enum for approvals (with the new
// limit for a spent budget), one text field per question or missing input
// otherwise.
// secretNote says where a person enters the secret values an interrupt
// asks for: MCP forbids asking for sensitive values by elicitation, so the
// run waits with this note instead of an elicitation form.
func secretNote(run *contracts.Run) string {
	return fmt.Sprintf("%s needs secret values for %s, which MCP elicitation may not ask for: enter them in the web console "+
		"(/ui/run?id=%s on `ordo serve --http`) or with `ordo runs resume %s` in a terminal, where they are typed unseen; "+
		"approve with answers also takes them, through this client. Ordo records them redacted.",
		run.Interrupt.Tool, strings.Join(run.Interrupt.Secret, ", "), run.ID, run.ID)
}

func elicitationFor(run *contracts.Run) mcp.ElicitationParams {
	in := run.Interrupt
	props := map[string]any{}
	var required []string
	var msg strings.Builder
	fmt.Fprintf(&msg, "Ordo run %s: %s\nGoal: %s\n", run.ID, in.Message, run.Goal)
	switch in.Kind {
	case contracts.InterruptPlanApproval:
		if n := len(run.Plans); n > 0 {
			for i, a := range run.Plans[n-1].Plan.Actions {
				fmt.Fprintf(&msg, "%d. %s: %s (%s)", i+1, a.ID, a.Tool, a.Intent)
				if d, ok := run.Policy[a.ID]; ok && d.Decision != contracts.PolicyAllow {
					fmt.Fprintf(&msg, " [policy: %s %s]", d.Decision, d.Reason)
				}
				msg.WriteByte('\n')
			}
		}
		props["decision"] = map[string]any{"type": "string", "title": "Decision", "enum": []string{"approve", "reject"}}
		required = []string{"decision"}
	case contracts.InterruptContractChanged:
		for _, c := range in.Changes {
			fmt.Fprintf(&msg, "%s (called by %s) changed: %s; contract %.12s -> %.12s\n", c.Tool, strings.Join(c.Actions, ", "), strings.Join(c.Fields, ", "), c.Old.Hash, c.New.Hash)
			if c.Description != "" {
				fmt.Fprintf(&msg, "  now described as: %s\n", c.Description)
			}
		}
		props["decision"] = map[string]any{"type": "string", "title": "Decision", "enum": []string{"approve", "reject"}}
		required = []string{"decision"}
	case contracts.InterruptStepApproval:
		fmt.Fprintf(&msg, "Step %s calls %s with %s\n", in.ActionID, in.Tool, string(in.Payload))
		props["decision"] = map[string]any{"type": "string", "title": "Decision", "enum": []string{"approve", "skip", "reject"}}
		required = []string{"decision"}
	case contracts.InterruptInputRequired:
		fmt.Fprintf(&msg, "Step %s (%s) needs values for: %s\n", in.ActionID, in.Tool, strings.Join(in.Fields, ", "))
		for i, f := range in.Fields {
			props[fieldKey(i)] = withSuggestion(map[string]any{"type": "string", "title": f, "description": "JSON value or plain text for " + f}, in.Suggestions[f])
			required = append(required, fieldKey(i))
		}
	case contracts.InterruptClarify:
		for i, q := range in.Questions {
			props[fieldKey(i)] = withSuggestion(map[string]any{"type": "string", "title": q}, in.Suggestions[q])
			required = append(required, fieldKey(i))
		}
	case contracts.InterruptVerifyQuestion:
		required = verifyQuestionForm(in, props, &msg)
	case contracts.InterruptStepFailed, contracts.InterruptPaused:
		required = steerForm(run, props, &msg)
	case contracts.InterruptBudgetExceeded:
		if b := in.Budget; b != nil {
			fmt.Fprintf(&msg, "Budget %s: %g used of %g, before the %s\n", b.Budget, b.Used, b.Limit, b.Before)
		}
		props["decision"] = map[string]any{"type": "string", "title": "Decision", "enum": []string{"approve", "reject"}}
		props["limit"] = map[string]any{"type": "number", "title": "New limit for this run (approve)"}
		if b := in.Budget; b != nil && strings.HasSuffix(b.Budget, ".wall_time") {
			props["limit"] = map[string]any{"type": "string", "title": "New limit for this run (approve): seconds, or a duration such as 30m"}
		}
		required = []string{"decision"}
	}
	if _, ok := props["decision"]; ok {
		props["note"] = map[string]any{"type": "string", "title": "Note (optional)"}
	}
	return mcp.ElicitationParams{
		Message:         strings.TrimSpace(msg.String()),
		RequestedSchema: map[string]any{"type": "object", "properties": props, "required": required},
	}
}

func fieldKey(i int) string { return "a" + strconv.Itoa(i+1) }

// decisionFromElicitation turns an accepted form into the decision for
// the interrupt. Invalid content is refused and the run stays as it was.
func decisionFromElicitation(in *contracts.Interrupt, content any) (contracts.Decision, error) {
	form, _ := content.(map[string]any)
	bad := func(field, why string) (contracts.Decision, error) {
		return contracts.Decision{}, contracts.Errorf(contracts.CodeInvalidDecision, "approval form: %s %s", field, why).
			With("field", field).With("interrupt", string(in.Kind))
	}
	note, _ := form["note"].(string)
	switch in.Kind {
	case contracts.InterruptPlanApproval, contracts.InterruptStepApproval, contracts.InterruptContractChanged:
		kind, _ := form["decision"].(string)
		d := contracts.Decision{Kind: contracts.DecisionKind(kind), Note: note}
		switch d.Kind {
		case contracts.DecisionApprove, contracts.DecisionReject:
			return d, nil
		case contracts.DecisionSkip:
			if in.Kind == contracts.InterruptStepApproval {
				return d, nil
			}
		}
		return bad("decision", fmt.Sprintf("%q does not answer a %s", kind, in.Kind))
	case contracts.InterruptBudgetExceeded:
		kind, _ := form["decision"].(string)
		d := contracts.Decision{Kind: contracts.DecisionKind(kind), Note: note}
		switch d.Kind {
		case contracts.DecisionReject:
			return d, nil
		case contracts.DecisionApprove:
			// As approve's answers.limit: the engine reads it (a number, a
			// numeric string, a duration for wall_time) and refuses what it
			// cannot take, with the same error whichever way it came.
			d.Answers = map[string]any{"limit": form["limit"]}
			return d, nil
		}
		return bad("decision", fmt.Sprintf("%q does not answer a %s", kind, in.Kind))
	case contracts.InterruptVerifyQuestion:
		return decisionFromVerifyForm(in, form, note)
	case contracts.InterruptStepFailed, contracts.InterruptPaused:
		return decisionFromSteerForm(in, form, note)
	case contracts.InterruptInputRequired, contracts.InterruptClarify:
		keys := in.Fields
		if in.Kind == contracts.InterruptClarify {
			keys = in.Questions
		}
		answers := map[string]any{}
		for i, k := range keys {
			v, ok := form[fieldKey(i)]
			if !ok || v == nil || v == "" {
				return bad(fieldKey(i), "is missing (answers "+strconv.Quote(k)+")")
			}
			if s, isText := v.(string); isText && in.Kind == contracts.InterruptInputRequired {
				v = jsonOrText(s)
			}
			answers[k] = v
		}
		return contracts.Decision{Kind: contracts.DecisionAnswer, Answers: answers}, nil
	}
	return bad("interrupt", "is of an unknown kind")
}

// jsonOrText reads a typed answer: a JSON number, boolean, object or array
// is taken as such, anything else as text.
func jsonOrText(s string) any {
	t := strings.TrimSpace(s)
	if t == "" || !(strings.ContainsAny(t[:1], "-0123456789{[") || t == "true" || t == "false") {
		return s
	}
	var v any
	if err := json.Unmarshal([]byte(t), &v); err != nil {
		return s
	}
	return v
}
