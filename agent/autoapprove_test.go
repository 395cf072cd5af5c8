package agent

import (
	"context"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// AutoApprove (what an MCP caller can ask for) answers the approvals
// configuration asks for, never a policy require_confirm: the run stops
// at the step policy wants confirmed, with that step not called, and a
// person's approval continues it. AutoApprovePolicy (a person's own
// `ordo run --yes`) answers both.
func TestAutoApproveNeverAnswersPolicy(t *testing.T) {
	ctx := context.Background()
	cfg := Config{
		HITL:   contracts.HITLSwitches{Enabled: true, PlanApproval: true, StepApproval: true},
		Policy: PolicyConfig{ConfirmTools: []string{"chat."}},
	}
	t.Run("auto_approve", func(t *testing.T) {
		tt := newTools(t, notesTool(), chatTool())
		store := newStore()
		run, err := fresh(cfg, tt, store).Run(ctx, Request{Plan: mustPlan(t, notesChatPlan), UserID: "u1",
			Options: contracts.RunOptions{AutoApprove: true}})
		wantStatus(t, run, err, contracts.RunInterrupted)
		// Plan approval and a1's step approval (configuration) were
		// answered; a2's policy confirmation was not.
		if in := run.Interrupt; in.Kind != contracts.InterruptStepApproval || in.ActionID != "a2" {
			t.Fatalf("interrupt %+v, want the step approval of a2", in)
		}
		if len(tt.Calls("notes.create_page")) != 1 || len(tt.Calls("chat.post_message")) != 0 {
			t.Fatalf("calls: notes %d, chat %d", len(tt.Calls("notes.create_page")), len(tt.Calls("chat.post_message")))
		}
		run, err = fresh(cfg, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
		wantStatus(t, run, err, contracts.RunCompleted)
		if len(tt.Calls("chat.post_message")) != 1 || len(run.Decisions) != 1 || run.Decisions[0].Decision.By != "u1" {
			t.Fatalf("after the approval: chat %d, decisions %+v", len(tt.Calls("chat.post_message")), run.Decisions)
		}
	})
	t.Run("auto_approve_policy", func(t *testing.T) {
		tt := newTools(t, notesTool(), chatTool())
		run, err := fresh(cfg, tt, newStore()).Run(ctx, Request{Plan: mustPlan(t, notesChatPlan), UserID: "u1",
			Options: contracts.RunOptions{AutoApprove: true, AutoApprovePolicy: true}})
		wantStatus(t, run, err, contracts.RunCompleted)
		if len(tt.Calls("chat.post_message")) != 1 {
			t.Fatalf("chat calls %d", len(tt.Calls("chat.post_message")))
		}
	})
}
