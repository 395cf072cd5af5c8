package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/ordo-run/ordo/contracts"
)

// ForkRequest starts a new run from a recorded one.
type ForkRequest struct {
	RunID      string          // the run forked
	FromAction string          // the first action of its current plan to run again
	Plan       *contracts.Plan // optional: an edited plan for the new run
	UserID     string          // the new run's owner (default: the forked run's)
	Scopes     []string        // the new run's granted scopes (nil: the forked run's)
	// AutoApprove and AutoApprovePolicy are the new run's, as for a run a
	// person starts (contracts.RunOptions): a fork never inherits
	// AutoApprovePolicy, so nobody forks their way past a confirmation.
	AutoApprove, AutoApprovePolicy bool
}

// Fork starts a new run that takes the recorded results of the forked
// run's steps before FromAction — every succeeded or skipped step of its
// current plan except FromAction and the actions that depend on it, and
// the state they produced — so no tool or model call is repeated, then continues from
// FromAction: with the same plan, or with req.Plan, validated as the new
// run's plan against the state taken over. An action req.Plan adds, or
// changes in what it calls or yields (tool, inputs, bindings, requires,
// produces, success criteria), runs again too, with what depends on it: a
// recorded result is reused only for the call the new plan would make.
// Policy and approvals apply as to any run. The forked run is read, never
// changed; a running one is refused. Like Run, it returns the new run at its next stop; a bad
// request is a coded error and creates nothing.
func (e *Engine) Fork(ctx context.Context, req ForkRequest) (*contracts.Run, error) {
	src, err := e.deps.Store.Load(ctx, req.RunID)
	if err != nil {
		return nil, err
	}
	if len(src.Plans) == 0 {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "run %s has no plan to fork", src.ID).With("run_id", src.ID)
	}
	if src.Status == contracts.RunRunning {
		// What it does now — a call in flight, or one its dead process left
		// unrecorded — would run again in the fork under another key.
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "run %s is running: a fork would run again the call it is making, under another idempotency key; fork it once it stops (pause it), or resume it if its process died", src.ID).
			With("run_id", src.ID).With("status", src.Status)
	}
	rev := src.Plans[len(src.Plans)-1]
	again, err := rerun(rev.Plan, req.FromAction)
	if err != nil {
		return nil, err
	}
	plan := req.Plan
	if plan == nil {
		p := clonePlan(&rev.Plan)
		p.Context = nil
		plan = &p
	} else {
		again = edited(rev.Plan, *plan, req.FromAction, again)
	}
	byID := map[string]contracts.Action{}
	for _, a := range plan.Actions {
		byID[a.ID] = a
	}
	// done: the action's last succeeded (or skipped: a person's decision
	// stands) step of the current plan, for each action not run again; its
	// record is taken over when the new plan still has the action, what it
	// produced in any case.
	done := map[string]int{}
	for i, s := range src.Steps {
		if s.PlanVersion == rev.Version && (s.Status == contracts.StepSucceeded || s.Status == contracts.StepSkipped) && !again[s.ActionID] {
			done[s.ActionID] = i
		}
	}
	seed := forkSeed{state: e.stateBefore(src, rev.Version, done)}
	for _, i := range slices.Sorted(maps.Values(done)) {
		if s := src.Steps[i]; byID[s.ActionID].Tool == s.Tool {
			s.PlanVersion, s.Attempt = 1, 1
			seed.steps = append(seed.steps, s)
		}
	}
	user := req.UserID
	if user == "" {
		user = src.UserID
	}
	opts := src.Options
	opts.Direct = false
	opts.AutoApprove = opts.AutoApprove || req.AutoApprove
	opts.AutoApprovePolicy = req.AutoApprovePolicy
	if req.Scopes != nil {
		opts.Scopes = req.Scopes
	}
	// The caller's context goes with the fork; so does the session, when
	// the fork stays the same user's (sessions are private).
	session := src.SessionID
	if user != src.UserID {
		session = ""
	}
	return e.Run(ctx, Request{Goal: src.Goal, Plan: plan, UserID: user, Options: opts, Source: "fork", Context: src.Context, Session: session,
		reason: fmt.Sprintf("forked from run %s at action %s", src.ID, req.FromAction), seed: &seed})
}

// forkSeed is what a fork takes over from the run it forks.
type forkSeed struct {
	steps []contracts.StepRecord
	state map[string]json.RawMessage
}

// stateBefore is the state the steps a fork keeps produced: every step of
// an earlier plan version and the done steps of the current one, in the
// order they ran. A value a later step (one run again) overwrote is read
// back from the step's own result; the last value of a key is the run's.
func (e *Engine) stateBefore(src *contracts.Run, version int, done map[string]int) map[string]json.RawMessage {
	last := map[string]int{}
	for i, s := range src.Steps {
		for _, k := range s.Produced {
			last[k] = i
		}
	}
	state := map[string]json.RawMessage{}
	for i, s := range src.Steps {
		if j, ok := done[s.ActionID]; len(s.Produced) == 0 || s.PlanVersion == version && (!ok || j != i) {
			continue
		}
		var again map[string]json.RawMessage
		for _, k := range s.Produced {
			if v, ok := src.State[k]; ok && last[k] == i {
				state[k] = v
				continue
			}
			if again == nil {
				again = e.producedBy(s)
			}
			if v, ok := again[k]; ok {
				state[k] = v
			} else {
				delete(state, k) // not readable: the key stays unbound rather than stale
			}
		}
	}
	return state
}

// edited adds to again (the actions run again from `from` in the forked
// plan) what an edited plan changes: every action it adds or changes in
// what it calls or yields, and, over the edited plan's graph, everything
// that depends on those or on `from`.
func edited(old, p contracts.Plan, from string, again map[string]bool) map[string]bool {
	prev := map[string]contracts.Action{}
	for _, a := range old.Actions {
		prev[a.ID] = a
	}
	roots := []string{from}
	for _, a := range p.Actions {
		if o, ok := prev[a.ID]; !ok || !sameCall(o, a) {
			roots = append(roots, a.ID)
		}
	}
	for id := range dependents(p, roots) {
		again[id] = true
	}
	return again
}

// sameCall says whether two actions make the same call and keep its result
// the same way (what a person reads, the risk hints and the retry policy
// aside).
func sameCall(a, b contracts.Action) bool {
	call := func(a contracts.Action) []byte {
		var in, bind any
		if len(a.Inputs) > 0 {
			in = a.Inputs
		}
		if len(a.InputBindings) > 0 {
			bind = a.InputBindings
		}
		b, _ := json.Marshal([]any{a.Tool, optional(a.Requires), optional(a.Produces), optional(a.SuccessCriteria), bind, in})
		return b
	}
	return string(call(a)) == string(call(b))
}

// rerun is the set of actions a fork from action `from` runs again: from
// itself and every action that depends on it, directly or not.
func rerun(p contracts.Plan, from string) (map[string]bool, error) {
	if !slices.ContainsFunc(p.Actions, func(a contracts.Action) bool { return a.ID == from }) {
		ids := make([]string, len(p.Actions))
		for i, a := range p.Actions {
			ids[i] = a.ID
		}
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "action %q is not in the run's current plan (actions: %v)", from, ids).
			With("field", "from_action").With("actions", ids)
	}
	return dependents(p, []string{from}), nil
}

// dependents is roots and every action of p that depends on one of them,
// directly or not (depends_on, or requires a key one of them produces).
func dependents(p contracts.Plan, roots []string) map[string]bool {
	producer := map[string]string{}
	for _, a := range p.Actions {
		for _, k := range a.Produces {
			producer[k] = a.ID
		}
	}
	again := map[string]bool{}
	for _, id := range roots {
		again[id] = true
	}
	for changed := true; changed; {
		changed = false
		for _, a := range p.Actions {
			if again[a.ID] {
				continue
			}
			if slices.ContainsFunc(a.Requires, func(k string) bool { return again[producer[k]] }) ||
				slices.ContainsFunc(a.DependsOn, func(id string) bool { return again[id] }) {
				again[a.ID], changed = true, true
			}
		}
	}
	return again
}
