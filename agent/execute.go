package agent

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/contracts"
)

// Execute runs a ready run until it completes, fails, is rejected or stops
// at an interrupt. It also continues a run left running by a process that
// died (a call that was in flight is re-issued with its idempotency key),
// and one left pending with its checked plan (asking for plan approval
// first where configured).
func (e *Engine) Execute(ctx context.Context, runID string) (*contracts.Run, error) {
	return e.withRun(ctx, runID, false, func(ctx context.Context, run *contracts.Run) error {
		return e.advance(ctx, run, byExecute, contracts.Decision{})
	})
}

// stop is why the DAG loop returned.
type stop int

const (
	stopDone stop = iota
	stopInterrupted
	stopFailed
	stopCancelled
	stopAsked    // a person asked for a pause or a cancel (steer.go)
	stopRepinned // a tool's contract changed: drive the current plan version again (pin.go)
)

// failure is an action that could not be completed in this plan version.
type failure struct {
	action string
	err    *contracts.Error
}

// execute drives the run through plan versions until it stops. checked,
// when not nil, is the current plan's graph, checked by this call.
func (e *Engine) execute(ctx context.Context, run *contracts.Run, checked *contracts.Graph) (err error) {
	// The status is owed: written with the first call, or with the stop.
	ctx, settle := e.owing(ctx, run)
	defer func() { err = settle(err) }()
	run.Status = contracts.RunRunning
	run.Error = nil
	w := e.watch(ctx, run.ID)
	defer w.stop()
	for {
		why, f, err := e.runDAG(ctx, run, w, checked)
		checked = nil
		if err != nil {
			return err
		}
		switch why {
		case stopInterrupted:
			return nil
		case stopCancelled:
			run.Status = contracts.RunReady
			run.Error = contracts.Errorf(contracts.CodeCancelled, "cancelled at a step boundary; resuming the run (ordo runs resume, or MCP execute with its run_id) continues it")
			if err := e.save(ctx, run); err != nil {
				return err
			}
			e.emit(ctx, run, EventCancelled, "", "", run.Error.Message)
			return nil
		case stopDone:
			return e.finish(ctx, run, contracts.RunCompleted)
		case stopAsked:
			return e.steered(ctx, run, *w.request())
		case stopRepinned:
			continue
		}
		if f == nil { // runDAG already failed the run
			return nil
		}
		if budgetError(f.err) != nil {
			return e.failOrAsk(ctx, run, f.err, f.action, nil)
		}
		replanned, err := e.failed(ctx, run, f)
		if err != nil || !replanned {
			return err
		}
	}
}

// outcome is what a worker brings back from one tool call.
type outcome struct {
	action  contracts.Action
	tool    *contracts.Tool
	started contracts.StepRecord
	result  json.RawMessage
	err     error
	toolLLM []llm.Usage // the calls of the built-in LLM tools
}

// runDAG executes the current plan version: every action whose
// dependencies are done is dispatched, up to the parallelism limit, each to
// a worker goroutine (a lone call is made on this one); results come back
// to this goroutine, which alone changes the run. Each step
// boundary costs the same whatever the run's length: progress indexes the
// steps, and each finished call is one appended log entry (a call's start
// is not written: its idempotency key is deterministic, so a call in
// flight at a crash is re-issued under the same key).
func (e *Engine) runDAG(ctx context.Context, run *contracts.Run, w *steerWatch, g *contracts.Graph) (stop, *failure, error) {
	rev := run.Plans[len(run.Plans)-1]
	plan := rev.Plan
	pins := rev.Pins
	var changes []contracts.ContractChange
	stored := g == nil // checked before this call: policy and contracts may have changed since
	if stored {
		pins = e.pinned(rev)
		changes = e.contractChanges(pins, &plan, finished(run, rev.Version))
		var err error
		g, err = contracts.CheckPlan(&plan, e.deps.Tools, contracts.CheckOptions{InitialState: slices.Collect(maps.Keys(run.State)), AllowedServices: run.Options.Services})
		if err != nil {
			if len(changes) > 0 {
				if broken := brokenContract(changes, err); broken != nil {
					return stopFailed, e.failBroken(ctx, run, rev.Version, broken), nil
				}
			}
			return stopFailed, nil, e.fail(ctx, run, planFailed("the plan no longer checks against the catalog", err))
		}
	}
	state, err := decodeState(run.State, len(plan.Actions))
	if err != nil {
		return stopFailed, nil, e.fail(ctx, run, err)
	}
	if run.State == nil {
		run.State = make(map[string]json.RawMessage, len(plan.Actions))
	}
	prog := newProgress(run, rev, g)
	if stored {
		if ok, err := e.recheckPolicy(ctx, run, &plan, prog.done); !ok || err != nil {
			return stopFailed, nil, err
		}
		if len(changes) > 0 {
			why, err := e.contractChanged(ctx, run, rev, changes)
			return why, nil, err
		}
	}
	run.Steps = slices.Grow(run.Steps, prog.left) // a record per action left, at least
	parallel := e.cfg.Parallelism
	if c := plan.Constraints; c != nil && c.AllowParallel != nil && !*c.AllowParallel {
		parallel = 1 // the plan asks for its actions one at a time
	}
	running := map[string]bool{}
	results := make(chan outcome)
	var (
		fail     *failure
		pending  *contracts.Interrupt
		dataErr  error
		repinned bool // a tool's contract changed since the drive began
	)
	var started []outcome // the calls dispatched in one round
	var ready []int       // the ready actions a round goes through (dispatching changes prog.ready)
	for {
		started = started[:0]
		if fail == nil && pending == nil && dataErr == nil && !repinned && ctx.Err() == nil && w.request() == nil {
			ready = append(ready[:0], prog.ready...)
			for _, i := range ready {
				if len(running) >= parallel {
					break
				}
				a := plan.Actions[i]
				if running[a.ID] {
					continue
				}
				if missing := missingKeys(state, a.Requires); len(missing) > 0 {
					fail = &failure{a.ID, contracts.Errorf(contracts.CodeUnsatisfiedRequires,
						"action %s cannot run: state lacks %s (a step it depends on was skipped or produced nothing)", a.ID, strings.Join(missing, ", ")).
						With("action", a.ID).With("keys", missing)}
					break
				}
				if t, ok := e.deps.Tools.Lookup(a.Tool); ok && unpinned(pins, t) {
					repinned = true // checked again before any call under the new contract
					break
				}
				if fail, dataErr = e.stepBudget(ctx, run, a, len(running)); fail != nil || dataErr != nil {
					break
				}
				o, in, err := e.prepare(ctx, run, prog, a, state)
				if err != nil {
					if contracts.CodeOf(err) == contracts.CodeSequenceConflict || contracts.CodeOf(err) == contracts.CodeStore {
						dataErr = err
						break
					}
					if f := e.recordFailure(ctx, run, prog, a, nil, err, false); f != nil {
						fail = f
						break
					}
					continue
				}
				if in != nil {
					pending = in
					break
				}
				if err := e.flush(ctx, run); err != nil { // what is owed is durable before the call
					dataErr = err
					break
				}
				e.emit(ctx, run, EventStepStarted, a.ID, a.Tool, attemptNote(o.started.Attempt))
				running[a.ID] = true
				started = append(started, o)
			}
		}
		if len(running) == 0 {
			switch {
			case dataErr != nil:
				return stopFailed, nil, dataErr
			case repinned:
				return stopRepinned, nil, nil
			case pending != nil:
				return stopInterrupted, nil, e.interrupt(ctx, run, pending)
			case fail != nil:
				return stopFailed, fail, nil
			case ctx.Err() != nil:
				return stopCancelled, nil, nil
			case prog.left == 0:
				return stopDone, nil, nil
			case w.request() != nil:
				return stopAsked, nil, nil
			}
			return stopFailed, nil, e.fail(ctx, run, contracts.Errorf(contracts.CodeInternal, "no action can run and the plan is not done"))
		}
		var o outcome
		if len(started) == 1 && len(running) == 1 {
			o = e.call(ctx, started[0]) // the only call in flight: no worker needed
		} else {
			for _, o := range started {
				go func() { results <- e.call(ctx, o) }()
			}
			o = <-results
		}
		delete(running, o.action.ID)
		if f, err := e.finishStep(ctx, run, prog, o, state); err != nil {
			dataErr = err
		} else if f != nil && fail == nil {
			fail = f
		}
	}
}

// finishStep verifies a call's outcome, records it and checkpoints. It
// returns a failure when the action cannot succeed in this plan version.
func (e *Engine) finishStep(ctx context.Context, run *contracts.Run, prog *progress, o outcome, state map[string]any) (*failure, error) {
	for _, u := range o.toolLLM {
		e.count(run, "tool", u)
	}
	rec := o.started
	rec.EndedAt = e.now()
	rec.Result = o.result
	produced, err := o.err, error(nil)
	var values map[string]any
	if produced == nil {
		values, err = e.verify(ctx, run, o.action, o.tool, o.result, state, rec.Attempt)
	} else {
		err = produced
	}
	e.setState(run, state, values, &rec)
	if err != nil {
		f := e.recordFailure(ctx, run, prog, o.action, &rec, err, o.err != nil)
		if serr := e.save(ctx, run); serr != nil {
			return nil, serr
		}
		return f, nil
	}
	rec.Status = contracts.StepSucceeded
	run.Steps = append(run.Steps, rec)
	prog.record(rec)
	save := e.save
	if prog.left == 0 { // the run finishes next: its last write carries the step
		save = e.owe
	}
	if err := save(ctx, run); err != nil {
		return nil, err
	}
	e.emit(ctx, run, EventStepSucceeded, o.action.ID, o.action.Tool, attemptNote(rec.Attempt))
	return nil, nil
}

// attemptNote is a step event's message.
func attemptNote(n int) string { return "attempt " + strconv.Itoa(n) }

// setState adds produced values to the run's state and the record.
func (e *Engine) setState(run *contracts.Run, state, values map[string]any, rec *contracts.StepRecord) {
	if run.State == nil {
		run.State = map[string]json.RawMessage{}
	}
	for k, v := range values {
		b, _ := json.Marshal(v)
		run.State[k] = b
		state[k] = v
		rec.Produced = append(rec.Produced, k)
	}
	slices.Sort(rec.Produced)
}

// recordFailure appends a failed attempt (rec nil: it failed before any
// call) and says whether the action is out of attempts. A tool call's own
// error (called) gets no other attempt here: Tools.Call already repeated
// it as far as it was safe (the host's one retry loop, errors marked
// Retryable, the call's own key). The engine makes a new attempt, under a
// new key, only of what the call could not see: a valid result that
// failed verification, or a model's error around the call (filler,
// critic).
func (e *Engine) recordFailure(ctx context.Context, run *contracts.Run, prog *progress, a contracts.Action, rec *contracts.StepRecord, err error, called bool) *failure {
	ce := contracts.AsError(err)
	if rec == nil {
		now := e.now()
		rec = &contracts.StepRecord{ActionID: a.ID, Tool: a.Tool, PlanVersion: prog.version, Attempt: prog.tries[a.ID] + 1, StartedAt: now, EndedAt: now}
	}
	rec.Status = contracts.StepFailed
	rec.Error = ce
	run.Steps = append(run.Steps, *rec)
	prog.record(*rec)
	e.emit(ctx, run, EventStepFailed, a.ID, a.Tool, ce.Message)
	if !called && retryable(ce) && rec.Attempt < e.maxAttempts(a, ce) {
		return nil
	}
	return &failure{a.ID, ce}
}

// retryable: validation errors (bad payload, missing produces) will not
// change on a retry, nor will a result the critic wants re-planned;
// everything else may.
func retryable(e *contracts.Error) bool {
	if next, _ := criticDetails(e)["next"].(string); next == "replan" || next == "ask_user" {
		return false
	}
	return e.Code/1000 != 1 && e.Code != contracts.CodeNoLLM
}

func (e *Engine) maxAttempts(a contracts.Action, err *contracts.Error) int {
	if _, critic := criticDetails(err)["score"]; critic {
		return e.cfg.Verifier.MaxIterations
	}
	if a.Retries != nil && a.Retries.MaxAttempts > 0 {
		return a.Retries.MaxAttempts
	}
	return 1
}

// progress indexes the steps of one plan version so that a step
// boundary costs O(1) whatever the run's length: which actions are done,
// each action's attempts, the critic's last feedback, calls an older build
// recorded as started but never ended, and which actions are ready.
type progress struct {
	version    int
	dependents map[string][]int // action id -> plan indexes of the actions that depend on it
	waiting    []int            // by plan index: dependencies not yet done
	ready      []int            // plan indexes not done whose dependencies are, ascending
	order      map[string]int
	done       map[string]bool
	tries      map[string]int
	feedback   map[string]string
	started    map[string]contracts.StepRecord
	left       int // actions not done
}

func newProgress(run *contracts.Run, rev contracts.PlanRevision, g *contracts.Graph) *progress {
	acts := rev.Plan.Actions
	p := &progress{version: rev.Version, dependents: map[string][]int{}, waiting: make([]int, len(acts)),
		order: make(map[string]int, len(acts)), done: make(map[string]bool, len(acts)), tries: make(map[string]int, len(acts)),
		feedback: map[string]string{}, started: map[string]contracts.StepRecord{}, left: len(acts)}
	for i, a := range acts {
		p.order[a.ID] = i
	}
	for _, s := range run.Steps {
		if s.PlanVersion == rev.Version {
			p.note(s)
		}
	}
	for i, a := range acts {
		for _, d := range g.Deps[a.ID] {
			p.dependents[d] = append(p.dependents[d], i)
			if !p.done[d] {
				p.waiting[i]++
			}
		}
		if !p.done[a.ID] && p.waiting[i] == 0 {
			p.ready = append(p.ready, i)
		}
	}
	return p
}

// note takes one step record into the counts, without readiness.
func (p *progress) note(s contracts.StepRecord) bool {
	p.tries[s.ActionID] = max(p.tries[s.ActionID], s.Attempt)
	switch s.Status {
	case contracts.StepStarted:
		p.started[s.ActionID] = s
		return false
	case contracts.StepFailed:
		if s.Error != nil {
			p.feedback[s.ActionID], _ = criticDetails(s.Error)["feedback"].(string)
		}
	}
	if st, ok := p.started[s.ActionID]; ok && st.Attempt == s.Attempt {
		delete(p.started, s.ActionID)
	}
	if s.Status == contracts.StepFailed || p.done[s.ActionID] {
		return false
	}
	if _, inPlan := p.order[s.ActionID]; inPlan {
		p.done[s.ActionID] = true
		p.left--
	}
	return true
}

// record takes a step record appended now, making the actions that
// waited only for it ready.
func (p *progress) record(s contracts.StepRecord) {
	if !p.note(s) {
		return
	}
	if i := slices.Index(p.ready, p.order[s.ActionID]); i >= 0 {
		p.ready = slices.Delete(p.ready, i, i+1)
	}
	for _, i := range p.dependents[s.ActionID] {
		if p.waiting[i]--; p.waiting[i] == 0 {
			at, _ := slices.BinarySearch(p.ready, i)
			p.ready = slices.Insert(p.ready, at, i)
		}
	}
}

// attempts is the highest attempt number recorded for an action.
func attempts(run *contracts.Run, version int, id string) int {
	n := 0
	for _, s := range run.Steps {
		if s.PlanVersion == version && s.ActionID == id {
			n = max(n, s.Attempt)
		}
	}
	return n
}

func missingKeys(state map[string]any, keys []string) []string {
	var out []string
	for _, k := range keys {
		if _, ok := state[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// decodeState decodes the run's state, with room for more keys.
func decodeState(raw map[string]json.RawMessage, more int) (map[string]any, error) {
	out := make(map[string]any, len(raw)+more)
	for k, v := range raw {
		d, err := contracts.DecodeJSON(v)
		if err != nil {
			return nil, contracts.Errorf(contracts.CodeCheckpointFormat, "state key %s: %w", k, err).With("key", k)
		}
		out[k] = d
	}
	return out, nil
}
