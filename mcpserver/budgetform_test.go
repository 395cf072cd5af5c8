package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// twoStepPlan uppercases twice: with a one-step budget the second step
// stops at a budget_exceeded interrupt.
func twoStepPlan(text string) map[string]any {
	p := upperPlan(text)
	p["actions"] = append(p["actions"].([]any), map[string]any{"id": "a2", "tool": "text.upper", "intent": "transform",
		"requires": []any{"upper"}, "produces": []any{}, "input_bindings": map[string]any{"text": "upper"}})
	return p
}

// TestBudgetFormTakesWhatApproveTakes: the budget_exceeded elicitation
// form reads the new limit as the engine reads approve's answers.limit: a
// numeric string such as "20" raises the budget (the form refused it
// while approve {answers: {limit: "20"}} took it), and a limit the engine
// refuses is refused with the engine's own error, whichever way it came.
func TestBudgetFormTakesWhatApproveTakes(t *testing.T) {
	cfg := agent.Config{Budgets: contracts.Budgets{Run: contracts.Budget{Steps: 1}, OnExceed: contracts.OnExceedAsk}}
	e := newEnv(t, withConfig(cfg))
	var limit any
	h := &elicitor{answer: func(p mcp.ElicitationParams) *mcp.ElicitationResult {
		return accept(map[string]any{"decision": "approve", "limit": limit})
	}}
	asks := e.stdioClient(t, clientOpts{opts: []client.ClientOption{client.WithElicitationHandler(h)}})

	limit = "20"
	if out := call(t, asks, "execute", map[string]any{"plan": twoStepPlan("form")}); out["status"] != "completed" {
		t.Fatalf("form with limit %q: %v", limit, out)
	}

	for i, bad := range []any{"lots", "1", 0.5, nil} {
		limit = bad
		goal := fmt.Sprintf("bad limit %d", i)
		formCode, formErr := toolError(t, asks, "execute", map[string]any{"plan": twoStepPlan(goal)})
		run, err := e.store.Load(context.Background(), runOf(t, e, "shout "+goal))
		if err != nil || run.Status != contracts.RunInterrupted {
			t.Fatalf("limit %v: the run moved on after the refused form: %+v %v", bad, run, err)
		}
		approveCode, approveErr := toolError(t, asks, "approve", map[string]any{"run_id": run.ID, "decision": "approve", "seq": run.Seq,
			"answers": map[string]any{"limit": bad}})
		if formCode != contracts.CodeInvalidDecision || formCode != approveCode || formErr["message"] != approveErr["message"] ||
			!strings.Contains(formErr["message"].(string), "answers.limit") {
			t.Errorf("limit %v: form refused with %d %v, approve with %d %v (must be the same)", bad, formCode, formErr, approveCode, approveErr)
		}
	}
}
