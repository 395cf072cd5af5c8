package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/contracts"
)

// The critic's verdict travels in a failed attempt's error details (see
// critic); these read it back for the next attempt of the same action.

// criticQuestion is what a person is asked when the critic says ask_user.
func criticQuestion(v verdict) string {
	for _, s := range []string{v.Question, v.Feedback, v.Reason} {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return "the result scored below the threshold; keep it, or say what to change"
}

// lastAttempt is the latest step record of an action in a plan version
// (nil: none). Only a retry calls it, reading back from the end.
func lastAttempt(run *contracts.Run, version int, id string) *contracts.StepRecord {
	for i := len(run.Steps) - 1; i >= 0; i-- {
		if s := &run.Steps[i]; s.PlanVersion == version && s.ActionID == id {
			return s
		}
	}
	return nil
}

// criticDetails are the details of the critic's verdict on an attempt: of
// a verification failure only, which the critic makes. A tool's error may
// carry any details (a plugin's are its own JSON): read as the critic's,
// they would put a plugin's question to a person in the critic's name.
func criticDetails(e *contracts.Error) map[string]any {
	if e == nil || e.Code != contracts.CodeVerificationFailed {
		return nil
	}
	return e.Details
}

// verifyQuestion is the interrupt that stops the next attempt of an action
// whose latest attempt the critic wants a person to see, unless a person
// already decided on that attempt.
func verifyQuestion(run *contracts.Run, version int, a contracts.Action) *contracts.Interrupt {
	last := lastAttempt(run, version, a.ID)
	if last == nil || last.Status != contracts.StepFailed || last.Error == nil {
		return nil
	}
	q, ok := criticDetails(last.Error)["ask_user"].(string)
	if !ok {
		return nil
	}
	if answered(run, version, a.ID, last.Attempt) != nil {
		return nil
	}
	return &contracts.Interrupt{
		Kind: contracts.InterruptVerifyQuestion, Message: "the critic asks about " + describeAction(a) + ": " + q,
		Questions: []string{q}, PlanVersion: version, ActionID: a.ID, Tool: a.Tool, Payload: last.Result,
		Attempt: last.Attempt,
	}
}

// answered is the person's decision on the critic's question about one
// attempt (nil: none yet).
func answered(run *contracts.Run, version int, id string, attempt int) *contracts.Decision {
	for i := len(run.Decisions) - 1; i >= 0; i-- {
		d := &run.Decisions[i]
		if d.Interrupt.Kind == contracts.InterruptVerifyQuestion && d.Interrupt.PlanVersion == version &&
			d.Interrupt.ActionID == id && d.Interrupt.Attempt == attempt {
			return &d.Decision
		}
	}
	return nil
}

// retryFeedback is what the filler hears for the next attempt: the
// critic's feedback and, when the critic asked, the person's answers.
func retryFeedback(run *contracts.Run, version int, id, feedback string) string {
	last := lastAttempt(run, version, id)
	if last == nil || last.Error == nil {
		return feedback
	}
	d := answered(run, version, id, last.Attempt)
	if d == nil || len(d.Answers) == 0 {
		return feedback
	}
	var b strings.Builder
	b.WriteString(feedback)
	if q, _ := criticDetails(last.Error)["ask_user"].(string); q != "" {
		fmt.Fprintf(&b, "\nThe critic asked the person: %s", q)
	}
	for _, k := range slices.Sorted(maps.Keys(d.Answers)) {
		fmt.Fprintf(&b, "\nThe person answered %s: %v", k, d.Answers[k])
	}
	return strings.TrimSpace(b.String())
}

// withOverrides applies the critic's patch.suggested_payload_overrides
// from the latest failed attempt to the retry's payload, but for secret
// fields, which no model writes (see bind). Overrides that would break the
// tool's input schema are dropped (logged): the filler's payload is tried
// instead of one Tools.Call would refuse.
func (e *Engine) withOverrides(run *contracts.Run, version int, a contracts.Action, tool *contracts.Tool, payload json.RawMessage) json.RawMessage {
	last := lastAttempt(run, version, a.ID)
	if last == nil || last.Status != contracts.StepFailed || last.Error == nil {
		return payload
	}
	o, _ := criticDetails(last.Error)["payload_overrides"].(map[string]any)
	if o = withoutSecrets(tool, o); len(o) == 0 {
		return payload
	}
	patched, err := applyAnswers(payload, o)
	if err == nil {
		err = tool.ValidateInput(patched)
	}
	if err != nil {
		e.log.Warn("critic's payload overrides dropped", "run_id", run.ID, "action", a.ID, "err", err)
		return payload
	}
	return patched
}

// decideVerifyQuestion applies a person's answer to the critic's question
// (the next attempt hears it, see retryFeedback) or approval: the latest
// attempt's result is kept as if the critic had passed it.
func (e *Engine) decideVerifyQuestion(ctx context.Context, run *contracts.Run, in contracts.Interrupt, d contracts.Decision, record func()) error {
	if d.Kind == contracts.DecisionAnswer && len(d.Answers) == 0 {
		return contracts.Errorf(contracts.CodeInvalidDecision, "answers are required").With("field", "answers")
	}
	if d.Kind != contracts.DecisionApprove {
		record()
		return nil
	}
	last := lastAttempt(run, in.PlanVersion, in.ActionID)
	tool, ok := e.deps.Tools.Lookup(in.Tool)
	if last == nil || last.Status != contracts.StepFailed {
		return contracts.Errorf(contracts.CodeInternal, "no failed attempt of %s to keep", in.ActionID).With("action", in.ActionID)
	}
	if !ok {
		return contracts.Errorf(contracts.CodeUnknownTool, "tool %s left the catalog", in.Tool).With("tool", in.Tool)
	}
	a := findAction(run, in.PlanVersion, in.ActionID)
	result, err := contracts.DecodeJSON(last.Result)
	if err != nil {
		return err
	}
	values, err := tool.ProduceKeys(result, a.Produces)
	if err != nil {
		return err
	}
	record()
	state, err := decodeState(run.State, 0)
	if err != nil {
		return err
	}
	rec := *last
	rec.Status, rec.Error, rec.Produced, rec.EndedAt = contracts.StepSucceeded, nil, nil, e.now()
	e.setState(run, state, values, &rec)
	run.Steps = append(run.Steps, rec)
	e.emit(ctx, run, EventStepSucceeded, in.ActionID, in.Tool, fmt.Sprintf("attempt %d kept by %s", rec.Attempt, d.By))
	return nil
}

// findAction is an action of a plan version (zero when absent).
func findAction(run *contracts.Run, version int, id string) contracts.Action {
	for _, rev := range run.Plans {
		if rev.Version == version {
			if i := slices.IndexFunc(rev.Plan.Actions, func(a contracts.Action) bool { return a.ID == id }); i >= 0 {
				return rev.Plan.Actions[i]
			}
		}
	}
	return contracts.Action{}
}

// clarified is the goal a clarify decision plans: with the person's
// answers, or, for proceed_anyway, with word that none will come.
func clarified(goal string, d contracts.Decision) string {
	if d.Kind == contracts.DecisionProceedAnyway {
		return withAnswers(goal, map[string]any{"note": "the person chose to proceed without answering; plan on reasonable assumptions and do not ask again"})
	}
	return withAnswers(goal, d.Answers)
}
