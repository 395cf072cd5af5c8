package agent

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// This file lets a person steer a run while it runs: pause it at the next
// step boundary, cancel it for good, and retry a failed or cancelled run
// from the step that failed (a fork).
//
// A request reaches the run's driver in one of two ways. An engine that
// drives the run itself (a pause_run to the ordo serve that executes it)
// flips the drive's flag at once. Another process (ordo runs pause against
// a run ordo serve drives) records the request in the store
// (memory.Requester) beside the run — the driver stays the only writer of
// the run — and the driver reads its requests every RequestPoll while it
// executes: one small read per second per executing run, none per step,
// so the per-step path costs one atomic load. The run stops at the first
// step boundary after the request is seen: within RequestPoll plus the
// steps in flight.

// RequestPoll is how often a driving engine reads the store for requests
// made in other processes.
const RequestPoll = time.Second

// request is a person's pause or cancel request (memory.RequestPause,
// memory.RequestCancel).
type request struct{ kind, by string }

// steerWatch is one execute call's ear for requests.
type steerWatch struct {
	asked atomic.Pointer[request]
	stop  func()
}

// request is the request this drive was asked to honour, or nil.
func (w *steerWatch) request() *request { return w.asked.Load() }

// set records r unless a request that wins over it is there: a cancel
// wins over a pause. It reports whether r was taken.
func (w *steerWatch) set(r request) bool {
	for {
		old := w.asked.Load()
		if old != nil && (old.kind == memory.RequestCancel || old.kind == r.kind) {
			return false
		}
		if w.asked.CompareAndSwap(old, &r) {
			return true
		}
	}
}

// steering is the engine's set of drives, by run id, that a request made
// in this process reaches directly.
type steering struct {
	mu     sync.Mutex
	drives map[string][]*steerWatch
}

// watch starts listening for requests to run runID while execute drives it.
func (e *Engine) watch(ctx context.Context, runID string) *steerWatch {
	w := &steerWatch{}
	e.steer.mu.Lock()
	if e.steer.drives == nil {
		e.steer.drives = map[string][]*steerWatch{}
	}
	e.steer.drives[runID] = append(e.steer.drives[runID], w)
	e.steer.mu.Unlock()
	unregister := func() {
		e.steer.mu.Lock()
		ws := slices.DeleteFunc(e.steer.drives[runID], func(x *steerWatch) bool { return x == w })
		if len(ws) == 0 {
			delete(e.steer.drives, runID)
		} else {
			e.steer.drives[runID] = ws
		}
		e.steer.mu.Unlock()
	}
	rq := e.requests()
	if rq == nil {
		w.stop = unregister
		return w
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(RequestPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			reqs, err := rq.Requests(ctx, runID)
			if err != nil {
				e.log.Warn("reading the run's requests failed", "run_id", runID, "err", err)
				continue
			}
			for _, kind := range []string{memory.RequestCancel, memory.RequestPause} {
				if by, ok := reqs[kind]; ok && w.set(request{kind, by}) {
					e.requested(ctx, runID, kind, by)
				}
			}
		}
	}()
	w.stop = func() {
		close(done)
		wg.Wait()
		unregister()
	}
	return w
}

// requested tells Deps.Events, and the subscriber of ctx (the drive's),
// that a drive saw a request. It is called off the drive's goroutine, so
// the event carries no view of the run.
func (e *Engine) requested(ctx context.Context, runID, kind, by string) {
	ev := Event{RunID: runID, Kind: EventRequested, Status: contracts.RunRunning, Time: e.now(),
		Message: fmt.Sprintf("%s requested by %s; stopping at the next step boundary", kind, by)}
	e.log.Info("run request", "run_id", runID, "kind", kind, "by", by)
	if e.deps.Events != nil {
		e.deps.Events(ev)
	}
	if fn, ok := ctx.Value(eventsKey{}).(func(Event)); ok {
		fn(ev)
	}
}

// EventRequested: a pause or cancel request reached the run's driver.
const EventRequested = "requested"

// Pause asks run runID to stop at its next step boundary at a paused
// interrupt (decisions continue, edit, abort). A run nobody drives is
// paused here and now; one this engine drives is told at once; one
// another process drives gets the request through the store and stops
// within RequestPoll of it plus the steps in flight. It returns the run
// as it stands: paused, or still running with the request on its way.
func (e *Engine) Pause(ctx context.Context, runID, by string) (*contracts.Run, error) {
	return e.ask(ctx, runID, request{memory.RequestPause, by})
}

// Cancel ends run runID for good (status cancelled, error 4005): at once
// when it waits or nobody drives it, else at its next step boundary, as
// Pause. In-flight calls finish and are recorded.
func (e *Engine) Cancel(ctx context.Context, runID, by string) (*contracts.Run, error) {
	return e.ask(ctx, runID, request{memory.RequestCancel, by})
}

func (e *Engine) ask(ctx context.Context, runID string, r request) (*contracts.Run, error) {
	if r.by == "" {
		r.by = "unknown"
	}
	run, err := e.deps.Store.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	if err := askable(run, r); err != nil {
		return nil, err
	}
	if r.kind == memory.RequestPause && run.Interrupt != nil && run.Interrupt.Kind == contracts.InterruptPaused {
		return run, nil // already paused
	}
	if e.tell(runID, r) {
		return run, nil
	}
	stopped, err := e.withRun(ctx, runID, false, func(ctx context.Context, run *contracts.Run) error {
		if err := askable(run, r); err != nil {
			return err
		}
		return e.steered(ctx, run, r)
	})
	if contracts.CodeOf(err) != contracts.CodeLeaseHeld {
		return stopped, err
	}
	rq := e.requests()
	if rq == nil {
		return nil, err
	}
	if err := rq.Request(ctx, runID, r.kind, r.by); err != nil {
		return nil, err
	}
	e.log.Info("run request recorded for its driver", "run_id", runID, "kind", r.kind, "by", r.by)
	return run, nil
}

// askable refuses a request a run in this status cannot take: a finished
// run, a pause of a run that waits for another decision or has no plan.
func askable(run *contracts.Run, r request) error {
	switch {
	case run.Status.Final():
		return contracts.Errorf(contracts.CodeRunAlreadyFinished, "run %s is %s", run.ID, run.Status).With("run", run.ID)
	case r.kind != memory.RequestPause:
		return nil
	case run.Status == contracts.RunInterrupted && run.Interrupt != nil && run.Interrupt.Kind != contracts.InterruptPaused:
		return contracts.Errorf(contracts.CodeInvalidInput, "run %s already waits for a %s decision", run.ID, run.Interrupt.Kind).
			With("run", run.ID).With("interrupt", run.Interrupt.Kind)
	case len(run.Plans) == 0 && run.Status == contracts.RunPending:
		return contracts.Errorf(contracts.CodeInvalidInput, "run %s has no plan yet: cancel it instead", run.ID).With("run", run.ID)
	}
	return nil
}

// tell hands r to this engine's drives of runID, if any.
func (e *Engine) tell(runID string, r request) bool {
	e.steer.mu.Lock()
	ws := slices.Clone(e.steer.drives[runID])
	e.steer.mu.Unlock()
	for _, w := range ws {
		if w.set(r) {
			e.requested(context.Background(), runID, r.kind, r.by)
		}
	}
	return len(ws) > 0
}

// steered honours r on the held run at a step boundary (or at rest): a
// paused interrupt, or the end. The request is withdrawn from the store.
func (e *Engine) steered(ctx context.Context, run *contracts.Run, r request) error {
	if rq := e.requests(); rq != nil {
		if err := rq.Withdraw(context.WithoutCancel(ctx), run.ID, r.kind); err != nil {
			e.log.Warn("withdrawing a run request failed", "run_id", run.ID, "kind", r.kind, "err", err)
		}
	}
	if r.kind == memory.RequestCancel {
		if in := run.Interrupt; in != nil {
			run.Decisions = append(run.Decisions, contracts.DecisionRecord{Interrupt: *in,
				Decision: contracts.Decision{Kind: contracts.DecisionAbort, By: r.by, Note: "cancelled"}, At: e.now()})
		}
		return e.cancel(ctx, run, r.by)
	}
	in := &contracts.Interrupt{Kind: contracts.InterruptPaused,
		Message: fmt.Sprintf("paused by %s: continue, edit the remaining plan, or abort", r.by)}
	if n := len(run.Plans); n > 0 {
		in.PlanVersion, in.Mermaid = run.Plans[n-1].Version, run.Plans[n-1].Mermaid
	}
	return e.interrupt(ctx, run, in)
}

// cancel ends the run for good: status cancelled, error 4005 naming who,
// a template answer and the audit trail as it stands.
func (e *Engine) cancel(ctx context.Context, run *contracts.Run, by string) error {
	run.Status = contracts.RunCancelled
	run.Interrupt = nil
	run.Error = contracts.Errorf(contracts.CodeCancelled, "cancelled by %s", by).With("by", by)
	run.Result = &contracts.RunResult{Answer: e.templateAnswer(run), Composer: "template"}
	if err := e.save(ctx, run); err != nil {
		return err
	}
	e.emit(ctx, run, EventCancelled, "", "", run.Error.Message)
	return nil
}

// onFailure is what an action out of retries does (Config.OnFailure).
func (e *Engine) onFailure(ctx context.Context) string {
	if e.cfg.OnFailure != "" {
		return e.cfg.OnFailure
	}
	if e.model(ctx) == nil {
		return contracts.OnFailureAsk
	}
	return contracts.OnFailureReplan
}

// failed handles an action that is out of attempts in this plan version:
// ask the person when the critic asked about its last attempt, else
// re-plan it, ask the person (step_failed) or fail the run. It reports
// whether the run goes on executing (a new plan version).
func (e *Engine) failed(ctx context.Context, run *contracts.Run, f *failure) (bool, error) {
	if run.Options.Direct {
		return e.replan(ctx, run, f) // a direct call fails with its tool's error
	}
	if n := len(run.Plans); n > 0 { // the critic's question on the last attempt goes to the person too
		for _, a := range run.Plans[n-1].Plan.Actions {
			if in := verifyQuestion(run, run.Plans[n-1].Version, a); a.ID == f.action && in != nil {
				return false, e.interrupt(ctx, run, in)
			}
		}
	}
	switch e.onFailure(ctx) {
	case contracts.OnFailureAsk:
		in := &contracts.Interrupt{Kind: contracts.InterruptStepFailed, ActionID: f.action, Error: f.err,
			Message: fmt.Sprintf("action %s failed: %s. Retry (with an edited payload), skip, replan or abort", f.action, f.err.Message)}
		if n := len(run.Plans); n > 0 {
			rev := run.Plans[n-1]
			in.PlanVersion = rev.Version
			for _, a := range rev.Plan.Actions {
				if a.ID == f.action {
					in.Tool = a.Tool
				}
			}
			for _, s := range slices.Backward(run.Steps) {
				if s.PlanVersion == rev.Version && s.ActionID == f.action {
					in.Payload = s.Payload
					break
				}
			}
		}
		return false, e.interrupt(ctx, run, in)
	case contracts.OnFailureFail:
		return false, e.fail(ctx, run, f.err)
	}
	return e.replan(ctx, run, f)
}

// Retry forks a failed or cancelled run from the action that failed (or
// from req.FromAction): the steps before it are taken over, it and its
// dependents run again (see Fork). A run that is not finished that way is
// refused: an interrupted one is answered instead (step_failed: retry).
func (e *Engine) Retry(ctx context.Context, req ForkRequest) (*contracts.Run, error) {
	src, err := e.deps.Store.Load(ctx, req.RunID)
	if err != nil {
		return nil, err
	}
	if src.Status != contracts.RunFailed && src.Status != contracts.RunCancelled {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "run %s is %s: only a failed or cancelled run is retried", src.ID, src.Status).
			With("run_id", src.ID).With("status", src.Status)
	}
	if req.FromAction == "" {
		if req.FromAction, err = failedAction(src); err != nil {
			return nil, err
		}
	}
	return e.Fork(ctx, req)
}

// failedAction is the action of the run's current plan to retry from: the
// last one that failed, else the first not finished — or, when that one
// requires a key an action the person skipped would have produced, the
// skipped one (a fork keeps a skip, so the retry would lack the key again).
func failedAction(run *contracts.Run) (string, error) {
	if len(run.Plans) == 0 {
		return "", contracts.Errorf(contracts.CodeInvalidInput, "run %s failed before it had a plan: run the goal again", run.ID).With("run_id", run.ID)
	}
	rev := run.Plans[len(run.Plans)-1]
	byID := map[string]contracts.Action{}
	for _, a := range rev.Plan.Actions {
		byID[a.ID] = a
	}
	done := map[string]contracts.StepStatus{} // the last outcome of each finished action
	from := ""
	for _, s := range slices.Backward(run.Steps) {
		if s.PlanVersion != rev.Version {
			continue
		}
		if _, inPlan := byID[s.ActionID]; s.Status == contracts.StepFailed && inPlan && done[s.ActionID] == "" && from == "" {
			from = s.ActionID
		}
		if (s.Status == contracts.StepSucceeded || s.Status == contracts.StepSkipped) && done[s.ActionID] == "" {
			done[s.ActionID] = s.Status
		}
	}
	for _, a := range rev.Plan.Actions {
		if from == "" && done[a.ID] == "" {
			from = a.ID
		}
	}
	if from == "" {
		return "", contracts.Errorf(contracts.CodeInvalidInput, "every action of run %s finished: name the action to retry from", run.ID).
			With("run_id", run.ID).With("field", "from_action")
	}
	for _, a := range rev.Plan.Actions {
		if done[a.ID] == contracts.StepSkipped && slices.ContainsFunc(a.Produces, func(k string) bool { return slices.Contains(byID[from].Requires, k) }) {
			return a.ID, nil
		}
	}
	return from, nil
}

// remaining drops from an edit made at a pause or a contract change, or
// from a plan being re-pinned, the actions already finished in the plan
// version (same id and tool), and the dependencies on them: finished steps
// are kept, not run again, and the state they produced is there for the
// rest.
func remaining(run *contracts.Run, version int, p *contracts.Plan) (*contracts.Plan, error) {
	done := finished(run, version)
	out := clonePlan(p)
	out.Actions = slices.DeleteFunc(out.Actions, func(a contracts.Action) bool { return done[a.ID] == a.Tool })
	for i := range out.Actions {
		out.Actions[i].DependsOn = slices.DeleteFunc(slices.Clone(out.Actions[i].DependsOn), func(id string) bool {
			_, ok := done[id]
			return ok && !slices.ContainsFunc(out.Actions, func(a contracts.Action) bool { return a.ID == id })
		})
	}
	if len(out.Actions) == 0 {
		return nil, contracts.Errorf(contracts.CodeInvalidDecision, "the edited plan leaves nothing to run: continue or abort instead").With("field", "plan")
	}
	return &out, nil
}

// requests is where requests from other processes are kept: Deps.Requests,
// else the store when it is a memory.Requester (nil: none).
func (e *Engine) requests() memory.Requester {
	if e.deps.Requests != nil {
		return e.deps.Requests
	}
	rq, _ := e.deps.Store.(memory.Requester)
	return rq
}

// ForgetRequests withdraws runID's pending pause and cancel requests: the
// asker's wait ended with the run stopped on its own (at another
// interrupt, or finished), so the request must not pause it later.
func (e *Engine) ForgetRequests(ctx context.Context, runID string) error {
	rq := e.requests()
	if rq == nil {
		return nil
	}
	for _, kind := range []string{memory.RequestPause, memory.RequestCancel} {
		if err := rq.Withdraw(ctx, runID, kind); err != nil {
			return err
		}
	}
	return nil
}
