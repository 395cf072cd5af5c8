package patterns

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// clarificationsMark is where the engine appends clarification answers to a
// run's goal (agent.withAnswers); the goal before it is what the user asked.
const clarificationsMark = "\n\nClarifications:"

// Decision.By values that are not a person: their decisions say nothing
// about the user's behaviour, and counting them would let memory reinforce
// itself.
var machineDeciders = []string{"memory", "auto"}

// Collect consolidates what a finished run shows into its user's memory:
// the goal and its plan, each tool attempt, the clarification answers and
// the step approval decisions. An unfinished run is refused (with a coded
// error naming the status) and nothing is stored.
func (m *Memory) Collect(ctx context.Context, run *contracts.Run) error {
	if run == nil {
		return contracts.Errorf(contracts.CodeInvalidInput, "no run to collect").With("field", "run")
	}
	if !run.Status.Final() {
		return contracts.Errorf(contracts.CodeInvalidInput, "run %s is %s, not finished", run.ID, run.Status).
			With("field", "status").With("run", run.ID)
	}
	if err := checkName("user_id", run.UserID, true); err != nil {
		return err
	}
	at := run.UpdatedAt
	if at.IsZero() {
		at = time.Now()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, obs := range observe(run) {
		if err := m.consolidate(ctx, obs, at); err != nil {
			return err
		}
	}
	return nil
}

// observe extracts one observation per pattern a run shows, as records
// holding this run's counts only. It is pure, so it can be fuzzed.
func observe(run *contracts.Run) []Record {
	goal, _, _ := strings.Cut(run.Goal, clarificationsMark)
	user := run.UserID
	success, failure := 0, 0
	switch run.Status {
	case contracts.RunCompleted:
		success = 1
	case contracts.RunFailed:
		failure = 1
	}
	var out []Record
	if n := len(run.Plans); n > 0 && success+failure > 0 {
		p := run.Plans[n-1].Plan
		out = append(out, Record{Namespace: NSPlan, User: user, Text: goal, Plan: &p, Successes: success, Failures: failure,
			fromTemplate: run.Plans[0].Source == "template"})
	}
	if t, ok := observeTemplate(run, success, failure); ok {
		out = append(out, t)
	}
	out = append(out, observeTools(run, goal)...)
	if c, ok := observeClarification(run, goal); ok {
		c.Successes, c.Failures = success, failure
		out = append(out, c)
	}
	return append(out, observeBehavior(run)...)
}

// observeTools groups finished attempts by tool and step intent. An attempt
// with no end time was in flight when a process stopped; it is not counted.
func observeTools(run *contracts.Run, goal string) []Record {
	actions := map[int]map[string]contracts.Action{}
	for _, rev := range run.Plans {
		byID := map[string]contracts.Action{}
		for _, a := range rev.Plan.Actions {
			byID[a.ID] = a
		}
		actions[rev.Version] = byID
	}
	type key struct{ tool, text string }
	var order []key
	acc := map[key]*Record{}
	for _, s := range run.Steps {
		if s.Tool == "" || s.EndedAt.IsZero() || (s.Status != contracts.StepSucceeded && s.Status != contracts.StepFailed) {
			continue
		}
		k := key{s.Tool, stepText(actions[s.PlanVersion][s.ActionID], goal)}
		r, ok := acc[k]
		if !ok {
			r = &Record{Namespace: NSTool, User: run.UserID, Tool: k.tool, Text: k.text}
			acc[k] = r
			order = append(order, k)
		}
		d := float64(max(0, s.EndedAt.Sub(s.StartedAt).Milliseconds()))
		n := float64(r.Samples())
		r.MeanDurationMS = (r.MeanDurationMS*n + d) / (n + 1)
		if s.Status == contracts.StepSucceeded {
			r.Successes++
		} else {
			r.Failures++
		}
	}
	out := make([]Record, len(order))
	for i, k := range order {
		out[i] = *acc[k]
	}
	return out
}

// stepText is what a tool record is matched on: the action's intent (else
// its summary) with the goal, so that both a step's text and a whole goal
// (which is what the planner's candidates are chosen for) find it.
func stepText(a contracts.Action, goal string) string {
	for _, s := range []string{a.Intent, a.Summary} {
		if s = strings.TrimSpace(s); s != "" {
			return s + "\n" + goal
		}
	}
	return goal
}

// observeClarification merges every answered clarify interrupt of a run.
func observeClarification(run *contracts.Run, goal string) (Record, bool) {
	r := Record{Namespace: NSClarification, User: run.UserID, Text: goal}
	for _, d := range run.Decisions {
		if d.Interrupt.Kind != contracts.InterruptClarify || d.Decision.Kind != contracts.DecisionAnswer || len(d.Decision.Answers) == 0 {
			continue
		}
		r.Questions = append(r.Questions, d.Interrupt.Questions...)
		if r.Answers == nil {
			r.Answers = map[string]any{}
		}
		for k, v := range d.Decision.Answers {
			r.Answers[k] = v
		}
	}
	return r, r.Answers != nil
}

// observeBehavior counts a person's step approval decisions per tool and
// keeps the values they gave for a tool's missing fields (by field, "$."
// dropped), which later input_required interrupts offer as suggestions.
func observeBehavior(run *contracts.Run) []Record {
	var order []string
	acc := map[string]*Record{}
	for _, d := range run.Decisions {
		tool, kind := d.Interrupt.Tool, d.Interrupt.Kind
		if kind != contracts.InterruptStepApproval && kind != contracts.InterruptInputRequired || tool == "" || slices.Contains(machineDeciders, d.Decision.By) {
			continue
		}
		r, ok := acc[tool]
		if !ok {
			r = &Record{Namespace: NSBehavior, User: run.UserID, Tool: tool, Text: tool}
			acc[tool] = r
			order = append(order, tool)
		}
		if kind == contracts.InterruptInputRequired {
			keepInputAnswers(r, run, d)
			continue
		}
		switch d.Decision.Kind {
		case contracts.DecisionApprove:
			r.Approvals++
		case contracts.DecisionEdit:
			r.Edits++
		case contracts.DecisionSkip:
			r.Skips++
		case contracts.DecisionReject:
			r.Rejects++
		}
	}
	out := make([]Record, 0, len(order))
	for _, t := range order {
		if r := acc[t]; r.Samples() > 0 || len(r.Answers) > 0 {
			out = append(out, *r)
		}
	}
	return out
}

// keepInputAnswers keeps in r what a person gave for the fields the
// interrupt d asked (by field, "$." dropped), when the step they were for
// then succeeded: not a key the answer added (it could grow the record
// without bound, or spell a secret field so as to escape the engine's
// check), not a value that led to a failure, not one longer than
// MaxInputAnswerBytes.
func keepInputAnswers(r *Record, run *contracts.Run, d contracts.DecisionRecord) {
	in := d.Interrupt
	if !slices.ContainsFunc(run.Steps, func(s contracts.StepRecord) bool {
		return s.ActionID == in.ActionID && s.PlanVersion == in.PlanVersion && s.Status == contracts.StepSucceeded
	}) {
		return
	}
	for _, f := range in.Fields {
		field := strings.TrimPrefix(f, "$.")
		v, ok := d.Decision.Answers[f]
		if !ok {
			v, ok = d.Decision.Answers[field]
		}
		if !ok || len(answerText(v)) > MaxInputAnswerBytes || len(r.Answers) >= MaxInputAnswers {
			continue
		}
		if r.Answers == nil {
			r.Answers = map[string]any{}
		}
		r.Answers[field] = v
	}
}

// mergeAnswers is a behavior record's answers after obs: obs's values (the
// latest win), then the stored ones, up to MaxInputAnswers fields.
func mergeAnswers(stored, obs map[string]any) map[string]any {
	out := maps.Clone(obs)
	for _, k := range slices.Sorted(maps.Keys(stored)) {
		if _, ok := out[k]; !ok && len(out) < MaxInputAnswers {
			out[k] = stored[k]
		}
	}
	return out
}

// consolidate finds the stored record obs belongs to and merges obs into
// it, or stores obs as a new record. Caller holds m.mu.
func (m *Memory) consolidate(ctx context.Context, obs Record, at time.Time) error {
	if obs.Namespace == NSWorkflow {
		return m.countTemplateUse(ctx, obs, at)
	}
	where := map[string]string{metaUser: obs.User}
	if k := keyOf(obs); k != "" {
		where[metaKey] = k
	}
	v, err := m.embed(ctx, obs.Text)
	if err != nil {
		return err
	}
	near, err := m.nearestTo(ctx, obs.Namespace, where, v, 1)
	if err != nil {
		return err
	}
	var stored *Record
	if len(near) > 0 && (obs.Namespace == NSBehavior || near[0].sim >= m.opts.Similarity) {
		// An update keeps the stored text, so it keeps the stored vector.
		stored, v = &near[0].Record, near[0].vec
	}
	r, ok := merge(stored, obs, at, m.opts)
	if !ok {
		return nil
	}
	if err := tooBig(r); err != nil {
		m.log.Warn("memory left a record out", "user", r.User, "err", err)
		return nil
	}
	if stored == nil {
		if _, err := m.makeRoom(ctx, r.Namespace, r.User); err != nil {
			return err
		}
	}
	if err := m.store(ctx, r, v); err != nil {
		return err
	}
	if r.Namespace == NSPlan && obs.Successes > 0 && !obs.fromTemplate && r.Successes >= learnAfter && !r.ShouldAvoid {
		return m.learnTemplate(ctx, r, at)
	}
	return nil
}

// merge applies one observation to a stored record (nil: none similar) and
// says whether there is anything to write. A run that did not complete
// never creates a plan record (only plans that worked become examples) nor
// a clarification, and its different answers replace none.
func merge(stored *Record, obs Record, at time.Time, o Options) (Record, bool) {
	if stored == nil {
		if (obs.Namespace == NSPlan || obs.Namespace == NSClarification) && obs.Successes == 0 {
			return obs, false
		}
		obs.ID, obs.CreatedAt, obs.LastUsed = newID(), at, at
		obs.ShouldAvoid = avoid(obs, o)
		return obs, true
	}
	r := *stored
	r.LastUsed = at
	switch obs.Namespace {
	case NSPlan:
		if obs.Successes > 0 {
			r.Plan = obs.Plan // the latest plan of this shape that worked
		}
	case NSTool:
		n0, n1 := float64(r.Samples()), float64(obs.Samples())
		r.MeanDurationMS = (r.MeanDurationMS*n0 + obs.MeanDurationMS*n1) / math.Max(1, n0+n1)
	case NSClarification:
		if !sameAnswers(r.Answers, obs.Answers) {
			if obs.Successes == 0 {
				return r, false // an answer that did not work replaces none that did
			}
			// The user answers differently now: the old statistics describe
			// an answer that is no longer given.
			r.Questions, r.Answers = obs.Questions, obs.Answers
			r.ReuseCount, r.Successes, r.Failures = 0, 0, 0
		} else {
			r.ReuseCount++
		}
	case NSBehavior:
		if len(obs.Answers) > 0 {
			r.Answers = mergeAnswers(r.Answers, obs.Answers)
		}
		r.Approvals += obs.Approvals
		r.Edits += obs.Edits
		r.Skips += obs.Skips
		r.Rejects += obs.Rejects
	}
	r.Successes += obs.Successes
	r.Failures += obs.Failures
	r.ShouldAvoid = avoid(r, o)
	return r, true
}

// avoid is the should_avoid rule: repeated failures, more than successes.
func avoid(r Record, o Options) bool {
	return r.Namespace == NSTool && r.Failures >= o.AvoidAfter && r.Failures > r.Successes
}

func sameAnswers(a, b map[string]any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}
