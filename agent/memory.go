package agent

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/patterns"
)

// MemoryConfig switches each use of pattern memory (Deps.Memory); all are
// off in the zero value. Seed 002's LangMem uses, without an LLM.
type MemoryConfig struct {
	// Collect hands every finished run to Deps.Collector, which
	// consolidates it in the background.
	Collect bool `json:"collect"`
	// Examples is how many of the user's past plans for similar goals the
	// planner sees as examples (0: none).
	Examples int `json:"examples"`
	// ToolAdvice boosts tools that worked for similar goals and drops
	// tools marked should_avoid from the planner's candidates.
	ToolAdvice bool `json:"tool_advice"`
	// Clarification answers the planner's questions from memory when the
	// remembered answer is trusted (reuse_count and confidence, see
	// patterns.Options), and otherwise offers it in the interrupt's
	// Suggestions.
	Clarification bool `json:"clarification"`
	// AutoApprove approves a step that step approval would stop at when
	// memory predicts the person accepts it (probability above
	// patterns.Options.AutoApproveAbove), recorded as decided by "memory".
	// Policy confirmations are never answered by memory.
	AutoApprove bool `json:"auto_approve"`
}

// PatternMemory is what the engine asks of the user's pattern memory
// (memory/patterns' *Memory is one): past plans as examples, tool advice,
// remembered clarifications and inputs, approval predictions, and saved
// plan templates. Its values are patterns' types; its implementation is
// not the engine's concern.
type PatternMemory interface {
	Examples(ctx context.Context, user, goal string, k int) ([]patterns.Example, error)
	ToolAdvice(ctx context.Context, user, goal string) (patterns.ToolAdvice, error)
	Clarification(ctx context.Context, user, goal string) (*patterns.Clarification, error)
	InputSuggestions(ctx context.Context, user, tool string, fields []string) (map[string]string, error)
	PredictApproval(ctx context.Context, user, tool string) (patterns.Prediction, error)
	SaveTemplate(ctx context.Context, user, name string, plan contracts.Plan) error
	Template(ctx context.Context, user, name string) (patterns.Template, error)
	Templates(ctx context.Context, user string) ([]patterns.Template, error)
	MatchTemplate(ctx context.Context, user, goal string) (*patterns.TemplateMatch, error)
}

// RunCollector takes finished runs for pattern memory to consolidate in
// the background (memory/patterns' *Collector is one); Submit reports
// false when it cannot take the run.
type RunCollector interface {
	Submit(run *contracts.Run) bool
}

// clarificationsMark starts the clarification answers withAnswers appends
// to a goal; pattern memory cuts there to find the goal as asked.
const clarificationsMark = "\n\nClarifications:"

// DecidedByMemory is Decision.By for what memory decided in a person's place.
const DecidedByMemory = "memory"

// remember hands a finished run to the background collector.
func (e *Engine) remember(run *contracts.Run) {
	if !e.cfg.Memory.Collect || e.deps.Collector == nil || !run.Status.Final() {
		return
	}
	if !e.deps.Collector.Submit(forMemory(run, e.deps.Tools)) {
		e.log.Warn("memory did not take the run", "run_id", run.ID)
	}
}

// memoryOn reports whether a use is switched on and has a store.
func (e *Engine) memoryOn(use bool) bool { return use && e.deps.Memory != nil }

// pastPlan is how an example reaches the planner.
type pastPlan struct {
	Goal    string             `json:"goal"`
	Actions []contracts.Action `json:"actions"`
}

// examples returns the user's past plans for goals like this one whose
// tools are all still in the catalog. Memory failures only log: memory
// improves a run, it never stops one.
func (e *Engine) examples(ctx context.Context, run *contracts.Run) []pastPlan {
	if !e.memoryOn(e.cfg.Memory.Examples > 0) {
		return nil
	}
	ex, err := e.deps.Memory.Examples(ctx, run.UserID, baseGoal(run), e.cfg.Memory.Examples)
	if err != nil {
		e.log.Warn("memory examples failed", "run_id", run.ID, "err", err)
		return nil
	}
	down := e.unavailable()
	var out []pastPlan
	for _, x := range ex {
		if slices.ContainsFunc(x.Plan.Actions, func(a contracts.Action) bool { _, ok := e.deps.Tools.Lookup(a.Tool); return !ok || down[a.Tool] }) {
			continue
		}
		actions := make([]contracts.Action, len(x.Plan.Actions))
		for i, a := range x.Plan.Actions {
			t, _ := e.deps.Tools.Lookup(a.Tool)
			actions[i] = shownAction(a, t)
		}
		out = append(out, pastPlan{Goal: x.Goal, Actions: actions})
	}
	return out
}

// advice is memory's boost and avoid list for a goal (empty when off).
func (e *Engine) advice(ctx context.Context, run *contracts.Run) patterns.ToolAdvice {
	if !e.memoryOn(e.cfg.Memory.ToolAdvice) {
		return patterns.ToolAdvice{}
	}
	adv, err := e.deps.Memory.ToolAdvice(ctx, run.UserID, baseGoal(run))
	if err != nil {
		e.log.Warn("memory tool advice failed", "run_id", run.ID, "err", err)
	}
	return adv
}

// withoutAvoided drops the tools memory says to avoid, unless that would
// leave nothing to plan with.
func withoutAvoided(ts []*contracts.Tool, avoid []string) []*contracts.Tool {
	if len(avoid) == 0 {
		return ts
	}
	kept := slices.DeleteFunc(slices.Clone(ts), func(t *contracts.Tool) bool { return slices.Contains(avoid, t.Name()) })
	if len(kept) == 0 {
		return ts
	}
	return kept
}

// baseGoal is the goal as the user asked it, before clarification answers
// were appended to it.
func baseGoal(run *contracts.Run) string {
	g, _, _ := strings.Cut(run.Goal, clarificationsMark)
	return g
}

// remembered returns the user's clarification for this goal, on the first
// planning of a run only (after a person answered, memory stays out).
func (e *Engine) remembered(ctx context.Context, run *contracts.Run) *patterns.Clarification {
	if !e.memoryOn(e.cfg.Memory.Clarification) || len(run.Plans) > 0 {
		return nil
	}
	for _, d := range run.Decisions {
		if d.Interrupt.Kind == contracts.InterruptClarify {
			return nil
		}
	}
	c, err := e.deps.Memory.Clarification(ctx, run.UserID, baseGoal(run))
	if err != nil {
		e.log.Warn("memory clarification failed", "run_id", run.ID, "err", err)
		return nil
	}
	return c
}

// reuseClarification applies a trusted remembered clarification before the
// planner runs (the person is not asked again what they reliably answer
// the same way), and records it as answered by memory.
// It returns the clarification when it was not trusted enough, for the
// interrupt's suggestions.
func (e *Engine) reuseClarification(ctx context.Context, run *contracts.Run) *patterns.Clarification {
	c := e.remembered(ctx, run)
	if c == nil || !c.Auto {
		return c
	}
	in := contracts.Interrupt{Kind: contracts.InterruptClarify, Questions: c.Questions, Suggestions: c.Suggestions(), CreatedAt: e.now(),
		Message: fmt.Sprintf("answered from memory (reused %d times, confidence %.2f)", c.ReuseCount, c.Confidence)}
	run.Decisions = append(run.Decisions, contracts.DecisionRecord{Interrupt: in, At: e.now(),
		Decision: contracts.Decision{Kind: contracts.DecisionAnswer, Answers: c.Answers, By: DecidedByMemory, Note: "memory " + c.ID}})
	run.Goal = withAnswers(run.Goal, c.Answers)
	e.emit(ctx, run, EventResumed, "", "", "clarify answered by memory")
	return nil
}

// suggestions renders a remembered clarification for an interrupt.
func suggestions(c *patterns.Clarification) map[string]string {
	if c == nil {
		return nil
	}
	return c.Suggestions()
}

// inputSuggestions are the values the user last gave for fields of tool
// (Config.Memory.Clarification), offered on an input_required interrupt;
// never for a secret field.
func (e *Engine) inputSuggestions(ctx context.Context, run *contracts.Run, tool *contracts.Tool, fields []string) map[string]string {
	if !e.memoryOn(e.cfg.Memory.Clarification) || run.UserID == "" {
		return nil
	}
	fields = slices.DeleteFunc(slices.Clone(fields), func(f string) bool { return secretField(tool, f) })
	s, err := e.deps.Memory.InputSuggestions(ctx, run.UserID, tool.Name(), fields)
	if err != nil {
		e.log.Warn("memory input suggestions failed", "run_id", run.ID, "err", err)
	}
	if len(s) == 0 {
		return nil
	}
	return s
}

// secretField reports whether a payload path, spelled any way answerPath
// reads it, lies in one of tool's secret fields (top-level fields).
func secretField(tool *contracts.Tool, path string) bool {
	return contracts.IsSecretField(tool.Contract.SecretFields, answerPath(path)[0])
}

// forMemory is run as pattern memory may keep it: what a person typed
// into a secret field of a missing input is left out, since memory keeps
// answers to offer them again (all of a decision's answers when its tool
// left the catalog and its secret fields are unknown), and so are the
// secret values its plans hold (withoutSecretInputs), since memory keeps
// plans to show them as examples. run itself is not changed.
func forMemory(run *contracts.Run, tools Tools) *contracts.Run {
	out := *run
	out.Decisions = slices.Clone(run.Decisions)
	for i, d := range out.Decisions {
		if d.Interrupt.Kind != contracts.InterruptInputRequired {
			continue
		}
		tool, known := tools.Lookup(d.Interrupt.Tool)
		secret := func(f string, _ any) bool { return !known || secretField(tool, f) }
		kept := maps.Clone(d.Decision.Answers)
		maps.DeleteFunc(kept, secret)
		out.Decisions[i].Decision.Answers = kept
	}
	out.Plans = slices.Clone(run.Plans)
	for i := range out.Plans {
		out.Plans[i].Plan = withoutSecretInputs(out.Plans[i].Plan, tools)
	}
	return &out
}

// approvedByMemory answers a step approval that only the step-approval
// switch asked for, when memory predicts the person accepts it. The
// decision is recorded like a person's, with By "memory".
func (e *Engine) approvedByMemory(ctx context.Context, run *contracts.Run, in *contracts.Interrupt) bool {
	if !e.memoryOn(e.cfg.Memory.AutoApprove) || run.Policy[in.ActionID].Decision == contracts.PolicyRequireConfirm {
		return false
	}
	p, err := e.deps.Memory.PredictApproval(ctx, run.UserID, in.Tool)
	if err != nil {
		e.log.Warn("memory approval prediction failed", "run_id", run.ID, "err", err)
		return false
	}
	if !p.Accept {
		return false
	}
	in.CreatedAt = e.now()
	run.Decisions = append(run.Decisions, contracts.DecisionRecord{Interrupt: *in, At: e.now(),
		Decision: contracts.Decision{Kind: contracts.DecisionApprove, By: DecidedByMemory,
			Note: fmt.Sprintf("predicted accept probability %.2f from %d decisions", p.Probability, p.Samples)}})
	e.emit(ctx, run, EventResumed, in.ActionID, in.Tool, "step_approval approve by memory")
	return true
}

// TemplateRequest runs a saved workflow template with new inputs.
type TemplateRequest struct {
	Name   string
	UserID string
	// Goal replaces the template's goal when set.
	Goal string
	// Inputs override literal payload values: "ACTION_ID.FIELD" -> value.
	Inputs  map[string]any
	Options contracts.RunOptions
	// Context and Session are as in Request: a template run may be a turn
	// of the user's conversation.
	Context string
	Session string
}

// SaveTemplate saves the current plan of a completed run as the run's
// user's workflow template name, without the values of secret fields
// (withoutSecretInputs): a run of the template asks for them.
func (e *Engine) SaveTemplate(ctx context.Context, runID, name string) error {
	if e.deps.Memory == nil {
		return contracts.Errorf(contracts.CodeInvalidConfig, "pattern memory is not configured").With("field", "memory")
	}
	run, err := e.deps.Store.Load(ctx, runID)
	if err != nil {
		return err
	}
	if run.Status != contracts.RunCompleted || len(run.Plans) == 0 {
		return contracts.Errorf(contracts.CodeInvalidInput, "run %s is %s; only a completed run's plan can be a template", runID, run.Status).
			With("field", "run").With("run", runID)
	}
	p := withoutSecretInputs(clonePlan(&run.Plans[len(run.Plans)-1].Plan), e.deps.Tools)
	p.Context = nil
	return e.deps.Memory.SaveTemplate(ctx, run.UserID, name, p)
}

// RunTemplate plans a run from the user's template (PlanTemplate) and
// executes it when ready.
func (e *Engine) RunTemplate(ctx context.Context, req TemplateRequest) (_ *contracts.Run, err error) {
	ctx, end := e.holdNew(ctx)
	defer func() { end(err) }()
	run, err := e.PlanTemplate(ctx, req)
	if err != nil || run.Status != contracts.RunReady {
		return run, err
	}
	return run, e.execute(ctx, run, nil)
}

// PlanTemplate plans a run from the user's template with req's inputs
// applied, like Plan with a caller's plan (no planner call; checked,
// policy, approval), and stops before any tool runs. Its plan revision's
// source is "template".
func (e *Engine) PlanTemplate(ctx context.Context, req TemplateRequest) (*contracts.Run, error) {
	if e.deps.Memory == nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "pattern memory is not configured").With("field", "memory")
	}
	t, err := e.deps.Memory.Template(ctx, req.UserID, req.Name)
	if err != nil {
		return nil, err
	}
	p := clonePlan(&t.Plan)
	if err := applyInputs(&p, req.Inputs); err != nil {
		return nil, err
	}
	goal := req.Goal
	if goal == "" {
		goal = p.Goal
	}
	p.Goal = goal
	// The reason names the template: the collector credits it with the
	// run's outcome (workflow memory).
	return e.Plan(ctx, Request{Goal: goal, Plan: &p, UserID: req.UserID, Options: req.Options, Source: "template",
		Context: req.Context, Session: req.Session,
		reason: patterns.TemplateSourcePrefix + req.Name})
}

// Templates lists the user's saved workflow templates by name.
func (e *Engine) Templates(ctx context.Context, userID string) ([]patterns.Template, error) {
	if e.deps.Memory == nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "pattern memory is not configured").With("field", "memory")
	}
	return e.deps.Memory.Templates(ctx, userID)
}

// Template returns one of the user's saved workflow templates.
func (e *Engine) Template(ctx context.Context, userID, name string) (patterns.Template, error) {
	if e.deps.Memory == nil {
		return patterns.Template{}, contracts.Errorf(contracts.CodeInvalidConfig, "pattern memory is not configured").With("field", "memory")
	}
	return e.deps.Memory.Template(ctx, userID, name)
}

// MatchTemplate is the user's saved template most like a planned run's
// goal (nil: none, memory off, or the run came from a template already):
// what a plan result offers to run instead, with no planner call next time.
func (e *Engine) MatchTemplate(ctx context.Context, run *contracts.Run) *patterns.TemplateMatch {
	if e.deps.Memory == nil || (len(run.Plans) > 0 && run.Plans[0].Source == "template") {
		return nil
	}
	m, err := e.deps.Memory.MatchTemplate(ctx, run.UserID, baseGoal(run))
	if err != nil {
		e.log.Warn("memory template match failed", "run_id", run.ID, "err", err)
		return nil
	}
	return m
}

// applyInputs sets "ACTION_ID.FIELD" literal inputs (FIELD may be a
// dotted path into an object input); a bad key is refused with a coded
// error. The plan is the caller's copy.
func applyInputs(p *contracts.Plan, inputs map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(inputs)) {
		id, field, ok := strings.Cut(k, ".")
		i := slices.IndexFunc(p.Actions, func(a contracts.Action) bool { return a.ID == id })
		if !ok || field == "" || i < 0 {
			return contracts.Errorf(contracts.CodeInvalidInput, "input %q names no ACTION_ID.FIELD of the template", k).
				With("field", "inputs").With("input", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(inputs)) {
		id, field, _ := strings.Cut(k, ".")
		i := slices.IndexFunc(p.Actions, func(a contracts.Action) bool { return a.ID == id })
		if p.Actions[i].Inputs == nil {
			p.Actions[i].Inputs = map[string]any{}
		}
		// FIELD may be a dotted path, as in input_bindings.
		err := checkBindingPath(id, field)
		if err == nil {
			err = setPath(p.Actions[i].Inputs, field, inputs[k])
		}
		if err != nil {
			return contracts.AsError(err).With("field", "inputs").With("input", k)
		}
		delete(p.Actions[i].InputBindings, field) // a literal replaces a binding of the same field
	}
	return nil
}
