package agent

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/agent/policy"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/patterns"
)

// Plan creates a run and plans it: the planner (one LLM call) or the
// caller's plan, validation (fail closed), then policy. It stops before
// any tool runs: the run is ready, interrupted (clarify, plan_approval) or
// failed. A run that fails is returned with a nil error and run.Error set;
// the error is for bad requests and store failures.
func (e *Engine) Plan(ctx context.Context, req Request) (_ *contracts.Run, err error) {
	ctx, end := e.holdNew(ctx)
	defer func() { end(err) }()
	goal := strings.TrimSpace(req.Goal)
	if goal == "" && req.Plan != nil {
		goal = req.Plan.Goal
	}
	if goal == "" {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "a goal or a plan with a goal is required").With("field", "goal")
	}
	if len(goal) > MaxGoal && req.seed == nil { // a fork keeps its run's goal, answers and all
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "the goal is %d bytes, over the limit of %d; give longer text as the context", len(goal), MaxGoal).
			With("field", "goal").With("limit", MaxGoal)
	}
	if req.Plan == nil && e.model(ctx) == nil {
		return nil, contracts.Errorf(contracts.CodeNoLLM, "no model is configured: supply a plan").With("field", "plan")
	}
	if err := e.checkTurnRequest(ctx, req); err != nil {
		return nil, err
	}
	// The conversation so far is read once, before the run's first
	// checkpoint, which keeps it for every later model call.
	turns, err := e.conversation(ctx, req.UserID, req.Session)
	if err != nil {
		return nil, err
	}
	now := e.now()
	ctx, span := startSpan(ctx, "ordo.plan")
	run := &contracts.Run{
		FormatVersion: contracts.RunFormatVersion, ID: newRunID(), UserID: req.UserID, Goal: goal,
		Status: contracts.RunPending, CreatedAt: now, Options: req.Options,
		SessionID: req.Session, Conversation: turns, Context: req.Context,
	}
	defer func() { endSpan(span, run, err) }()
	if run.Options.Timezone == "" {
		run.Options.Timezone = e.cfg.Timezone
	}
	if run.Options.Locale == "" {
		run.Options.Locale = e.cfg.Locale
	}
	// A caller's plan is checked before the run's first checkpoint, so that
	// checkpoint already holds it (see planStage). A goal for the planner is
	// checkpointed pending first: the planner call may take a while.
	if req.Plan == nil {
		if err := e.save(ctx, run); err != nil {
			return nil, err
		}
	}
	e.emit(ctx, run, EventRunStarted, "", "", goal)
	if req.args != nil {
		e.args.Store(run.ID, req.args)
	}
	if req.seed != nil {
		run.State, run.Steps = req.seed.state, req.seed.steps
	}
	if err := e.planStage(ctx, run, req); err != nil {
		if run.Seq == 0 { // never stored: there is no run to return
			return nil, err
		}
		return run, err
	}
	return run, nil
}

// Run plans and, when the plan is ready, executes it.
func (e *Engine) Run(ctx context.Context, req Request) (_ *contracts.Run, err error) {
	ctx, end := e.holdNew(ctx)
	defer func() { end(err) }()
	ctx, span := startSpan(ctx, "ordo.run")
	var run *contracts.Run
	defer func() { endSpan(span, run, err) }()
	req.execute = true
	var g *contracts.Graph
	req.checked = &g
	run, err = e.Plan(ctx, req)
	if err != nil || run.Status != contracts.RunReady {
		return run, err
	}
	return run, e.execute(ctx, run, g)
}

type candidate struct {
	Tool        string            `json:"tool"`
	Description string            `json:"description"`
	Risk        contracts.Risk    `json:"risk_level"`
	Tags        []string          `json:"tags,omitempty"`
	Input       json.RawMessage   `json:"input_schema"`
	Produces    map[string]string `json:"produces_map,omitempty"`
}

// planStage gets a plan (given or from the planner), validates it, applies
// policy and decides whether a person must approve it.
func (e *Engine) planStage(ctx context.Context, run *contracts.Run, req Request) error {
	var p *contracts.Plan
	var remembered *patterns.Clarification
	given, source := req.Plan, req.Source
	if source == "" {
		source = "caller"
	}
	if given != nil {
		cp := clonePlan(given)
		p = &cp
		e.planDefaults(run, p)
		// A direct call's plan is the engine's own (Call): no schema check.
		if req.args == nil {
			if err := contracts.ValidatePlan(p); err != nil {
				return e.fail(ctx, run, planFailed("the supplied plan is invalid", err))
			}
		}
	} else {
		source = "planner"
		remembered = e.reuseClarification(ctx, run)
		q := e.planQuery(ctx, run)
		pool := e.toolPool(q)
		chosen, ranked, _ := e.choose(ctx, pool, q) // q.TopUp: never an error
		cands := toolsOf(chosen)
		in := withTurns(run, map[string]any{
			"user_request": run.Goal, "timezone": run.Options.Timezone, "locale": run.Options.Locale, "now": e.localNow(run),
			"connected_services": run.Options.Services, "tool_candidates": describe(cands),
		})
		if past := e.examples(ctx, run); len(past) > 0 {
			in["past_plans"] = past
		}
		var phrases []string
		var ok bool
		var err error
		if p, phrases, ok, err = e.askPlanner(ctx, run, in, ranked && e.weakRetrieval(run.Goal)); !ok {
			return err
		}
		if phrases != nil {
			// The one tool search of this planning: candidates for the
			// planner's own phrases, then it must plan.
			cands = toolsOf(e.searched(ctx, pool, q, phrases))
			e.log.Info("planner searched the tool index", "run_id", run.ID, "phrases", phrases)
			in["tool_candidates"], in["searched_for"] = describe(cands), phrases
			if p, _, ok, err = e.askPlanner(ctx, run, in, false); !ok {
				return err
			}
		}
		e.planDefaults(run, p)
		if p.Context == nil {
			p.Context = &contracts.PlanContext{}
		}
		p.Context.UserText = run.Goal
		p.Context.ToolCandidates = names(cands)
	}
	if len(p.ClarificationQuestions) > 0 {
		h := e.hitl(run)
		if !h.Enabled || !h.Clarification {
			return e.fail(ctx, run, contracts.Errorf(contracts.CodePlanFailed, "the goal is ambiguous and clarification is off: %s",
				strings.Join(p.ClarificationQuestions, " ")).With("questions", p.ClarificationQuestions))
		}
		return e.interrupt(ctx, run, &contracts.Interrupt{
			Kind: contracts.InterruptClarify, Message: "the goal is ambiguous; please answer", Questions: p.ClarificationQuestions,
			Suggestions: suggestions(remembered),
		})
	}
	rev, decisions, g, err := e.checkPlan(run, p, source, req.reason, slices.Collect(maps.Keys(run.State)))
	if err != nil {
		switch contracts.CodeOf(err) {
		case contracts.CodePolicyDenied:
			e.commitPlan(ctx, run, rev, decisions)
			return e.fail(ctx, run, err)
		case contracts.CodeToolUnavailable: // not the plan's fault: its code, retryable, stands
			return e.fail(ctx, run, err)
		}
		return e.fail(ctx, run, planFailed("the plan does not check", err))
	}
	e.commitPlan(ctx, run, rev, decisions)
	if req.checked != nil {
		*req.checked = g
	}
	// A run given its plan is not written yet: its first checkpoint (which
	// takes its lease) is afterPlan's, or execution's before its first call.
	return e.afterPlan(ctx, run, req.execute)
}

// continuePlanned continues a pending run whose checked plan is already
// checkpointed (its process died between the first checkpoint and the
// next): plan approval where configured, else execution.
func (e *Engine) continuePlanned(ctx context.Context, run *contracts.Run) error {
	e.emit(ctx, run, EventResumed, "", "", "continue after planning")
	if err := e.afterPlan(ctx, run, true); err != nil || run.Status != contracts.RunReady {
		return err
	}
	return e.execute(ctx, run, nil)
}

// planned reports whether a pending run holds a checked plan.
func planned(run *contracts.Run) bool {
	return run.Status == contracts.RunPending && len(run.Plans) > 0
}

// afterPlan asks for plan approval where configured, else makes the run
// ready. When execution follows at once (then), ready is not written:
// execution's first write supersedes it, and a run left pending with its
// checked plan continues the same way.
func (e *Engine) afterPlan(ctx context.Context, run *contracts.Run, then bool) error {
	if in := e.planApproval(run); in != nil {
		return e.interrupt(ctx, run, in)
	}
	run.Status = contracts.RunReady
	run.Interrupt = nil
	if then {
		return nil
	}
	return e.save(ctx, run)
}

// planApproval is the plan_approval interrupt for the run's current plan
// where configuration asks for one (nil where it does not): for every plan
// nobody has approved yet, the planner's, a caller's or the re-planner's.
func (e *Engine) planApproval(run *contracts.Run) *contracts.Interrupt {
	rev := run.Plans[len(run.Plans)-1]
	h := e.hitl(run)
	if len(rev.Plan.Actions) == 0 || !h.Enabled || !h.PlanApproval || run.Options.AutoApprove {
		return nil
	}
	return &contracts.Interrupt{
		Kind: contracts.InterruptPlanApproval, Message: "approve, edit or reject the plan",
		PlanVersion: rev.Version, Mermaid: rev.Mermaid, Policy: run.Policy,
	}
}

func (e *Engine) planDefaults(run *contracts.Run, p *contracts.Plan) {
	if p.Version == "" {
		p.Version = contracts.PlanVersion
	}
	if p.Goal == "" {
		p.Goal = run.Goal
	}
	if p.Timezone == "" {
		p.Timezone = run.Options.Timezone
	}
	for i := range p.Actions {
		if p.Actions[i].Requires == nil {
			p.Actions[i].Requires = []string{}
		}
		if p.Actions[i].Produces == nil {
			p.Actions[i].Produces = []string{}
		}
	}
}

// planFailed wraps why a plan was refused, keeping beside the cause's code
// the details that say where it lies (the action, state key, tool or field),
// so a caller can point at it without unwrapping.
func planFailed(msg string, err error) error {
	wrapped := contracts.Errorf(contracts.CodePlanFailed, "%s: %w", msg, err).With("cause_code", int(contracts.CodeOf(err)))
	cause := contracts.AsError(err)
	for _, k := range []string{"action", "key", "tool", "field"} {
		if v, ok := cause.Details[k]; ok {
			wrapped = wrapped.With(k, v)
		}
	}
	return wrapped
}

// checkPlan validates p as the run's next plan version, with the state's
// keys counting as produced, pins it to its tools' contracts (pin.go) and
// applies policy. It changes nothing; on a policy denial it returns the
// revision and decisions with the error. The graph is the plan's, for
// executing it at once (see Request.checked).
func (e *Engine) checkPlan(run *contracts.Run, p *contracts.Plan, source, reason string, initial []string) (*contracts.PlanRevision, map[string]contracts.PolicyDecision, *contracts.Graph, error) {
	pins := e.pinsOf(p) // before the check: a change while it runs is found later
	g, err := contracts.CheckPlan(p, e.deps.Tools, contracts.CheckOptions{InitialState: initial, AllowedServices: run.Options.Services})
	if err != nil {
		return nil, nil, nil, err
	}
	if err := e.checkAvailable(p); err != nil {
		return nil, nil, nil, err
	}
	for _, a := range p.Actions {
		for _, c := range a.SuccessCriteria {
			if _, err := contracts.ParseCriterion(c); err != nil {
				return nil, nil, nil, contracts.Errorf(contracts.CodeInvalidInput, "action %s: success criterion: %w", a.ID, err).
					With("action", a.ID).With("field", "success_criteria")
			}
		}
		for field := range a.InputBindings {
			if err := checkBindingPath(a.ID, field); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	rev := &contracts.PlanRevision{
		Version: len(run.Plans) + 1, Source: source, Plan: *p, Levels: g.Levels, Mermaid: g.Mermaid(p),
		Reason: reason, CreatedAt: e.now(), Pins: pins,
	}
	decisions := e.evaluate(p, run.Options.Scopes)
	for _, a := range p.Actions {
		if d := decisions[a.ID]; d.Decision == contracts.PolicyDeny {
			return rev, decisions, nil, denied(a, d, "")
		}
	}
	return rev, decisions, g, nil
}

// evaluate is policy's verdict on every action of p for a caller holding
// scopes, under the configuration and the tool contracts as they are now.
func (e *Engine) evaluate(p *contracts.Plan, scopes []string) map[string]contracts.PolicyDecision {
	return policy.Evaluate(e.cfg.Policy, p, func(name string) (contracts.Contract, bool) {
		t, ok := e.deps.Tools.Lookup(name)
		if !ok {
			return contracts.Contract{}, false
		}
		return t.Contract, true
	}, scopes)
}

func denied(a contracts.Action, d contracts.PolicyDecision, now string) error {
	return contracts.Errorf(contracts.CodePolicyDenied, "policy %sdenies action %s (%s): %s", now, a.ID, a.Tool, d.Reason).
		With("action", a.ID).With("tool", a.Tool).With("reason", d.Reason)
}

// recheckPolicy applies policy again to the actions of a stored plan that
// are not done, when the run goes on executing it (an approval, a resume,
// another server's takeover): the configuration, the user's scopes
// (Deps.Scopes) or a tool's contract may have changed since the plan was
// checked. (A changed contract is pin.go's to find.)
// A denial now fails the run before any tool runs; a confirmation now
// asked for is asked (run.Policy keeps the stricter of the two decisions
// while the run is driven; the log keeps the plan's). ok is false when the
// run has failed.
func (e *Engine) recheckPolicy(ctx context.Context, run *contracts.Run, p *contracts.Plan, done map[string]bool) (ok bool, err error) {
	scopes := run.Options.Scopes
	if e.deps.Scopes != nil {
		scopes = e.deps.Scopes(run.UserID)
	}
	now := e.evaluate(p, scopes)
	tightened := false
	for _, a := range p.Actions {
		if done[a.ID] {
			continue
		}
		switch d := now[a.ID]; {
		case d.Decision == contracts.PolicyDeny:
			return false, e.fail(ctx, run, denied(a, d, "now "))
		case d.Decision == contracts.PolicyRequireConfirm && run.Policy[a.ID].Decision != contracts.PolicyRequireConfirm:
			if !tightened { // the recorded map may be shared with a logged interrupt
				run.Policy, tightened = maps.Clone(run.Policy), true
			}
			if run.Policy == nil {
				run.Policy = map[string]contracts.PolicyDecision{}
			}
			run.Policy[a.ID] = d
			e.emit(ctx, run, EventPolicy, a.ID, a.Tool, d.Decision+" "+d.Reason+" (policy changed since the plan was checked)")
		}
	}
	return true, nil
}

// checkAvailable refuses a plan with an action whose tool's source is down
// (Availability): it would fail when it runs. Retryable: the same plan is
// accepted once the source returns.
func (e *Engine) checkAvailable(p *contracts.Plan) error {
	av, ok := e.deps.Tools.(Availability)
	if !ok {
		return nil
	}
	for _, a := range p.Actions {
		if !av.Available(a.Tool) {
			err := contracts.Errorf(contracts.CodeToolUnavailable, "action %s: tool %s is unavailable (its source is down); try again when it returns", a.ID, a.Tool).
				With("action", a.ID).With("tool", a.Tool)
			err.Retryable = true
			return err
		}
	}
	return nil
}

// unavailable is the set of tools whose source is down (empty without
// Availability).
func (e *Engine) unavailable() map[string]bool {
	av, ok := e.deps.Tools.(Availability)
	if !ok {
		return nil
	}
	down := map[string]bool{}
	for _, n := range av.Unavailable() {
		down[n] = true
	}
	return down
}

// commitPlan makes rev the run's current plan.
func (e *Engine) commitPlan(ctx context.Context, run *contracts.Run, rev *contracts.PlanRevision, decisions map[string]contracts.PolicyDecision) {
	run.Plans = append(run.Plans, *rev)
	run.Policy = decisions
	e.emit(ctx, run, EventPlanReady, "", "", rev.Source)
	for _, a := range rev.Plan.Actions {
		d := decisions[a.ID]
		e.emit(ctx, run, EventPolicy, a.ID, a.Tool, d.Decision+" "+d.Reason)
	}
}

// AllToolsBound is the default Config.AllToolsMax: a catalog of at most
// this many usable tools is shown to the planner whole, so no ranking can
// lose the right tool whatever the goal's language, and 40 contracts still
// fit a prompt.
const AllToolsBound = 40

// WeakCoverage: when less than this share of the goal's words occurs in any
// tool's text (the recommender's Coverage; e.g. a Korean goal over English
// descriptions), the planner may answer with search phrases instead of a
// plan, once.
const WeakCoverage = 0.5

// askPlanner makes one planner call. With search offered, the answer may
// be search phrases instead of a plan. ok false means the run has failed
// (or waits for a person) and err is what planStage returns.
func (e *Engine) askPlanner(ctx context.Context, run *contracts.Run, in map[string]any, search bool) (p *contracts.Plan, phrases []string, ok bool, err error) {
	schema := contracts.PlanSchema()
	delete(in, "tool_search")
	if search {
		in["tool_search"] = true
		schema = contracts.PlannerAnswerSchema()
	}
	text, err := e.complete(ctx, run, "planner", in, schema)
	if err != nil {
		return nil, nil, false, e.failOrAsk(ctx, run, planFailed("the planner failed", err), "", nil)
	}
	if search {
		p, phrases, err = contracts.ParsePlannerAnswer([]byte(text))
	} else {
		p, err = contracts.ParsePlan([]byte(text))
	}
	if err != nil {
		return nil, nil, false, e.fail(ctx, run, planFailed("the planner's answer is not a valid plan", err))
	}
	return p, phrases, true, nil
}

// weakRetrieval reports whether the tool index sees too little of goal to
// rank for it.
func (e *Engine) weakRetrieval(goal string) bool {
	return e.deps.Recommender != nil && e.deps.Recommender.Coverage(goal) < WeakCoverage
}

// MaxCandidateDescription bounds, in runes, the description of a tool
// candidate a model is sent: a third party's tool writes its own, and one
// of a megabyte would fill (and pay for) every planner prompt it is a
// candidate in.
const MaxCandidateDescription = 1000

// describe is the tool candidates as a model is sent them: JSON values in
// the input (data, never the prompt's instructions), descriptions cut to
// MaxCandidateDescription.
func describe(ts []*contracts.Tool) []candidate {
	out := make([]candidate, len(ts))
	for i, t := range ts {
		c := t.Contract
		out[i] = candidate{Tool: c.Tool, Description: clipTo(c.Description, MaxCandidateDescription), Risk: c.RiskLevel,
			Tags: c.Tags, Input: c.InputSchema, Produces: c.ProducesMap}
	}
	return out
}

func names(ts []*contracts.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name()
	}
	return out
}

// clonePlan deep-copies a plan so a caller's value is never shared. The
// copy is what a JSON round trip gives, field by field: empty optional
// lists and maps become nil, and literal inputs (any Go values) go through
// JSON, which turns them into plain JSON values (inputs JSON cannot hold
// are kept, for ValidatePlan or the payload's encoding to refuse).
func clonePlan(p *contracts.Plan) contracts.Plan {
	out := *p
	out.Context = clonePtr(p.Context, func(c contracts.PlanContext) contracts.PlanContext {
		c.ConnectedServices, c.ToolCandidates = optional(c.ConnectedServices), optional(c.ToolCandidates)
		return c
	})
	out.FinalResponse = clonePtr(p.FinalResponse, func(f contracts.FinalResponse) contracts.FinalResponse {
		f.IncludeLinks = clonePtr(f.IncludeLinks, nil)
		return f
	})
	out.Constraints = clonePtr(p.Constraints, func(c contracts.Constraints) contracts.Constraints {
		c.AllowParallel, c.AllowedServices = clonePtr(c.AllowParallel, nil), optional(c.AllowedServices)
		return c
	})
	out.ClarificationQuestions = optional(p.ClarificationQuestions)
	if p.Actions != nil {
		out.Actions = make([]contracts.Action, len(p.Actions))
	}
	for i, a := range p.Actions {
		a.Requires, a.Produces = slices.Clone(a.Requires), slices.Clone(a.Produces)
		a.SuccessCriteria, a.DependsOn = optional(a.SuccessCriteria), optional(a.DependsOn)
		a.Risk = clonePtr(a.Risk, func(r contracts.ActionRisk) contracts.ActionRisk {
			r.Tags = optional(r.Tags)
			return r
		})
		a.PolicyHints, a.Retries = clonePtr(a.PolicyHints, nil), clonePtr(a.Retries, nil)
		a.InputBindings = nil
		if len(p.Actions[i].InputBindings) > 0 {
			a.InputBindings = maps.Clone(p.Actions[i].InputBindings)
		}
		a.Inputs = nil
		if in := p.Actions[i].Inputs; len(in) > 0 {
			if b, err := json.Marshal(in); err != nil || json.Unmarshal(b, &a.Inputs) != nil {
				a.Inputs = cloneValue(in).(map[string]any) // not JSON: validation says so
			}
		}
		out.Actions[i] = a
	}
	return out
}

// clonePtr copies *p into a new value, deep-copied by deep when not nil.
func clonePtr[T any](p *T, deep func(T) T) *T {
	if p == nil {
		return nil
	}
	v := *p
	if deep != nil {
		v = deep(v)
	}
	return &v
}

// optional copies an omitempty list: nil when empty, as JSON leaves it.
func optional(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}
