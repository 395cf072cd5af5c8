package agent

import (
	"context"
	"maps"
	"slices"

	"github.com/ordo-run/ordo/contracts"
)

type pastStep struct {
	Action  string           `json:"action"`
	Tool    string           `json:"tool"`
	Plan    int              `json:"plan_version"`
	Attempt int              `json:"attempt"`
	Status  string           `json:"status"`
	Error   *contracts.Error `json:"error,omitempty"`
	Keys    []string         `json:"produced,omitempty"`
}

// replan asks the re-planner for a plan of the remaining work after f,
// with the state's keys counting as produced. It reports false when the
// run ended instead (budget spent, no model, or an unusable plan: all
// fail closed with the audit trail kept) or waits for the new plan's
// approval (hitl.plan_approval: the re-planner's plan is a plan like any).
func (e *Engine) replan(ctx context.Context, run *contracts.Run, f *failure) (bool, error) {
	if f == nil {
		return false, nil
	}
	cause := f.err
	if run.Options.Direct { // a direct call fails with its tool's error
		return false, e.fail(ctx, run, cause)
	}
	if e.cfg.ReplanBudget < 0 || run.ReplanCount >= e.cfg.ReplanBudget {
		return false, e.fail(ctx, run, contracts.Errorf(contracts.CodeReplanExhausted,
			"action %s failed and the re-plan budget (%d) is spent: %s", f.action, max(e.cfg.ReplanBudget, 0), cause.Message).
			With("action", f.action).With("cause_code", int(cause.Code)).With("replans", run.ReplanCount))
	}
	if e.model(ctx) == nil {
		return false, e.fail(ctx, run, contracts.Errorf(cause.Code, "action %s failed and no model can re-plan: %s", f.action, cause.Message).
			With("action", f.action))
	}
	q := e.planQuery(ctx, run)
	chosen, _, _ := e.choose(ctx, e.toolPool(q), q) // q.TopUp: never an error
	cands := toolsOf(chosen)
	if t, ok := e.deps.Tools.Lookup("llm.summarize"); ok && !slices.Contains(cands, t) {
		cands = append(cands, t)
	}
	var past []pastStep
	for _, s := range run.Steps {
		if s.Status == contracts.StepStarted {
			continue
		}
		past = append(past, pastStep{s.ActionID, s.Tool, s.PlanVersion, s.Attempt, string(s.Status), s.Error, s.Produced})
	}
	state, _ := promptState(run.State, e.stateLimit())
	in := withTurns(run, map[string]any{
		"goal": run.Goal, "reason": cause.Message, "failed_action": f.action, "error": cause,
		"available_state": state, "past_steps": past, "tool_candidates": describe(cands),
		"timezone": run.Options.Timezone, "locale": run.Options.Locale, "now": e.localNow(run),
	})
	text, err := e.complete(ctx, run, "replanner", in, contracts.PlanSchema())
	if err != nil {
		return false, e.failOrAsk(ctx, run, planFailed("the re-planner failed", err), f.action, cause)
	}
	run.ReplanCount++
	p, err := contracts.ParsePlan([]byte(text))
	if err != nil {
		return false, e.fail(ctx, run, planFailed("the re-planner's answer is not a valid plan", err))
	}
	e.planDefaults(run, p)
	if len(p.Actions) == 0 {
		return false, e.fail(ctx, run, contracts.Errorf(contracts.CodePlanFailed, "the re-planner found no way to finish after %s failed: %s", f.action, cause.Message).
			With("action", f.action))
	}
	rev, decisions, _, err := e.checkPlan(run, p, "replanner", cause.Message, slices.Collect(maps.Keys(run.State)))
	if err != nil {
		if rev != nil {
			e.commitPlan(ctx, run, rev, decisions)
			return false, e.fail(ctx, run, err)
		}
		if contracts.CodeOf(err) == contracts.CodeToolUnavailable {
			return false, e.fail(ctx, run, err)
		}
		return false, e.fail(ctx, run, planFailed("the re-planned plan does not check", err))
	}
	e.commitPlan(ctx, run, rev, decisions)
	if in := e.planApproval(run); in != nil { // a new plan: the person approves it as they did the first
		e.emit(ctx, run, EventReplan, f.action, "", cause.Message)
		return false, e.interrupt(ctx, run, in)
	}
	if err := e.save(ctx, run); err != nil {
		return false, err
	}
	e.emit(ctx, run, EventReplan, f.action, "", cause.Message)
	return true, nil
}
