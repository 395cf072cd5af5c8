package agent

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/contracts"
)

// fits lists the decisions each interrupt accepts.
var fits = map[contracts.InterruptKind][]contracts.DecisionKind{
	contracts.InterruptClarify:       {contracts.DecisionAnswer, contracts.DecisionProceedAnyway, contracts.DecisionReject},
	contracts.InterruptPlanApproval:  {contracts.DecisionApprove, contracts.DecisionEdit, contracts.DecisionReject},
	contracts.InterruptStepApproval:  {contracts.DecisionApprove, contracts.DecisionEdit, contracts.DecisionSkip, contracts.DecisionReject},
	contracts.InterruptInputRequired: {contracts.DecisionAnswer, contracts.DecisionReject},
	// approve carries the budget's new limit for the run (answers.limit)
	contracts.InterruptBudgetExceeded: {contracts.DecisionApprove, contracts.DecisionReject},
	// retry may carry an edited payload; abort fails the run with the step's error
	contracts.InterruptStepFailed: {contracts.DecisionRetry, contracts.DecisionSkip, contracts.DecisionReplan, contracts.DecisionAbort},
	// edit carries the remaining plan; abort cancels the run
	contracts.InterruptPaused:         {contracts.DecisionContinue, contracts.DecisionEdit, contracts.DecisionAbort},
	contracts.InterruptVerifyQuestion: {contracts.DecisionAnswer, contracts.DecisionApprove, contracts.DecisionReject},
	// approve re-pins the plan to the new contracts; edit carries the remaining plan
	contracts.InterruptContractChanged: {contracts.DecisionApprove, contracts.DecisionEdit, contracts.DecisionReject},
}

// Decisions lists the decisions an interrupt of this kind accepts, in the
// order a person is offered them (the web console builds its forms from
// it, so a new kind needs no console change).
func Decisions(kind contracts.InterruptKind) []contracts.DecisionKind {
	return slices.Clone(fits[kind])
}

// Resume continues a run from the store with a person's decision and runs
// it to its next stop. It needs nothing from the engine that stopped the
// run. A decision that does not fit, or an invalid edit, is refused with a
// coded error and the run stays as it was. A run left running or ready by
// a stopped process, or pending with its checked plan, resumes with an
// empty decision. While it drives the
// run the engine holds the run's lease (stores with leases); another
// server's live lease is refused with CodeLeaseHeld.
func (e *Engine) Resume(ctx context.Context, runID string, d contracts.Decision) (*contracts.Run, error) {
	return e.withRun(ctx, runID, false, func(ctx context.Context, run *contracts.Run) error {
		return e.advance(ctx, run, byResume, d)
	})
}

// decide applies a person's decision to the interrupted, held run and
// drives it on.
func (e *Engine) decide(ctx context.Context, run *contracts.Run, d contracts.Decision) error {
	in := *run.Interrupt
	if d.Seq != 0 && d.Seq != run.Seq {
		return contracts.Errorf(contracts.CodeInvalidDecision, "run %s has moved on since the interrupt this decision answers (seq %d, now %d, waiting at %s): look at it again",
			run.ID, d.Seq, run.Seq, in.Kind).With("field", "seq").With("seq", run.Seq).With("interrupt", in.Kind)
	}
	if !slices.Contains(fits[in.Kind], d.Kind) {
		return contracts.Errorf(contracts.CodeInvalidDecision, "decision %q does not fit a %s interrupt (want one of %v)", d.Kind, in.Kind, fits[in.Kind]).
			With("field", "decision").With("interrupt", in.Kind)
	}
	if d.By == "" {
		d.By = "unknown"
	}
	record := func() {
		run.Decisions = append(run.Decisions, contracts.DecisionRecord{Interrupt: in, Decision: e.hideTypedSecrets(run.ID, in, d), At: e.now()})
		run.Interrupt = nil
		e.emit(ctx, run, EventResumed, in.ActionID, in.Tool, fmt.Sprintf("%s %s by %s", in.Kind, d.Kind, d.By))
	}
	if d.Kind == contracts.DecisionReject {
		record()
		if in.Kind == contracts.InterruptBudgetExceeded && in.Budget != nil { // no more spending, not even the composer's
			return e.fail(ctx, run, spentError(*in.Budget))
		}
		return e.finish(ctx, run, contracts.RunRejected)
	}
	if d.Kind == contracts.DecisionAbort {
		record()
		if in.Kind == contracts.InterruptStepFailed && in.Error != nil {
			return e.fail(ctx, run, in.Error)
		}
		return e.cancel(ctx, run, d.By)
	}
	switch in.Kind {
	case contracts.InterruptClarify:
		if len(d.Answers) == 0 && d.Kind != contracts.DecisionProceedAnyway {
			return contracts.Errorf(contracts.CodeInvalidDecision, "answers are required").With("field", "answers")
		}
		record()
		run.Goal = clarified(run.Goal, d)
		run.Status = contracts.RunPending
		if err := e.planStage(ctx, run, Request{}); err != nil || run.Status != contracts.RunReady {
			return err
		}
	case contracts.InterruptPlanApproval:
		if d.Kind == contracts.DecisionEdit {
			if err := e.applyEdit(ctx, run, in, d); err != nil {
				return err
			}
			break
		}
		record()
	case contracts.InterruptStepApproval:
		if err := e.checkStepDecision(run, in, d); err != nil {
			return err
		}
		record()
		if d.Kind == contracts.DecisionSkip {
			e.skip(ctx, run, in, d.Note)
		}
	case contracts.InterruptStepFailed:
		switch d.Kind {
		case contracts.DecisionRetry:
			if err := e.checkStepDecision(run, in, d); err != nil {
				return err
			}
			record()
		case contracts.DecisionSkip:
			record()
			e.skip(ctx, run, in, d.Note)
		case contracts.DecisionReplan:
			if e.model(ctx) == nil {
				return contracts.Errorf(contracts.CodeInvalidDecision, "no model is configured to re-plan: retry, skip or abort").With("field", "decision")
			}
			record()
			run.Status = contracts.RunRunning
			if replanned, err := e.replan(ctx, run, &failure{in.ActionID, in.Error}); err != nil || !replanned {
				return err
			}
		}
	case contracts.InterruptPaused, contracts.InterruptContractChanged:
		if d.Kind == contracts.DecisionEdit {
			if d.Plan == nil {
				return contracts.Errorf(contracts.CodeInvalidDecision, "an edit needs a plan").With("field", "plan")
			}
			rest, err := remaining(run, in.PlanVersion, d.Plan)
			if err != nil {
				return err
			}
			d.Plan = rest
			if err := e.applyEdit(ctx, run, in, d); err != nil {
				return err
			}
			break
		}
		record()
		if in.Kind == contracts.InterruptContractChanged {
			if err := e.repin(ctx, run, in.Changes, "approved by "+d.By); err != nil || run.Status == contracts.RunFailed {
				return err
			}
		}
	case contracts.InterruptInputRequired:
		var missing []string
		for _, f := range in.Fields {
			if _, ok := d.Answers[f]; !ok {
				if _, ok := d.Answers[strings.TrimPrefix(f, "$.")]; !ok {
					missing = append(missing, f)
				}
			}
		}
		if len(missing) > 0 {
			return contracts.Errorf(contracts.CodeInvalidDecision, "answers lack %s", strings.Join(missing, ", ")).
				With("field", "answers").With("missing", missing)
		}
		record()
	case contracts.InterruptVerifyQuestion:
		if err := e.decideVerifyQuestion(ctx, run, in, d, record); err != nil {
			return err
		}
	case contracts.InterruptBudgetExceeded:
		if _, err := raisedLimit(in.Budget, d.Answers); err != nil {
			return err
		}
		record()
		switch {
		case len(run.Plans) == 0: // stopped before the planner
			run.Status = contracts.RunPending
			if err := e.planStage(ctx, run, Request{}); err != nil || run.Status != contracts.RunReady {
				return err
			}
		case in.Budget.Cause != nil: // stopped before the re-planner
			run.Status = contracts.RunRunning
			if replanned, err := e.replan(ctx, run, &failure{in.ActionID, in.Budget.Cause}); err != nil || !replanned {
				return err
			}
		}
	}
	return e.execute(ctx, run, nil)
}

// skip records the interrupt's action as skipped: its dependents run
// without what it would have produced (one that requires it stops as a
// failure of its own).
func (e *Engine) skip(ctx context.Context, run *contracts.Run, in contracts.Interrupt, note string) {
	now := e.now()
	run.Steps = append(run.Steps, contracts.StepRecord{
		ActionID: in.ActionID, Tool: in.Tool, PlanVersion: in.PlanVersion, Attempt: attempts(run, in.PlanVersion, in.ActionID) + 1,
		Status: contracts.StepSkipped, StartedAt: now, EndedAt: now,
	})
	e.emit(ctx, run, EventStepSkipped, in.ActionID, in.Tool, note)
}

// applyEdit validates an edited plan as a new version; an invalid edit is
// refused and the run is left untouched.
func (e *Engine) applyEdit(ctx context.Context, run *contracts.Run, in contracts.Interrupt, d contracts.Decision) error {
	if d.Plan == nil {
		return contracts.Errorf(contracts.CodeInvalidDecision, "an edit needs a plan").With("field", "plan")
	}
	p := clonePlan(d.Plan)
	e.planDefaults(run, &p)
	if err := contracts.ValidatePlan(&p); err != nil {
		return err
	}
	rev, decisions, _, err := e.checkPlan(run, &p, "edit", d.Note, slices.Collect(maps.Keys(run.State)))
	if err != nil {
		return err
	}
	run.Decisions = append(run.Decisions, contracts.DecisionRecord{Interrupt: in, Decision: d, At: e.now()})
	run.Interrupt = nil
	e.emit(ctx, run, EventResumed, "", "", fmt.Sprintf("plan edited by %s", d.By))
	e.commitPlan(ctx, run, rev, decisions)
	return nil
}

// checkStepDecision refuses an edited payload (a step approval's edit, a
// retry's payload) that breaks the contract. Its values are the person's:
// a string "MISSING" there is what they sent, not a question.
func (e *Engine) checkStepDecision(run *contracts.Run, in contracts.Interrupt, d contracts.Decision) error {
	if d.Kind != contracts.DecisionEdit && (d.Kind != contracts.DecisionRetry || len(d.Payload) == 0) {
		return nil
	}
	tool, ok := e.deps.Tools.Lookup(in.Tool)
	if !ok {
		return contracts.Errorf(contracts.CodeUnknownTool, "tool %s left the catalog", in.Tool).With("tool", in.Tool)
	}
	if len(d.Payload) == 0 {
		return contracts.Errorf(contracts.CodeInvalidDecision, "an edit needs a payload").With("field", "payload")
	}
	if err := tool.ValidateInput(d.Payload); err != nil {
		return err
	}
	return nil
}

// withAnswers appends clarification answers to the goal, in key order.
func withAnswers(goal string, answers map[string]any) string {
	var b strings.Builder
	b.WriteString(goal)
	b.WriteString(clarificationsMark)
	for _, k := range slices.Sorted(maps.Keys(answers)) {
		fmt.Fprintf(&b, "\n- %s: %v", k, answers[k])
	}
	return b.String()
}
