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
// run's steps before FromAction — every succeeded step of its current plan
// except FromAction and the actions that depend on it, and the state they
// produced — so no tool or model call is repeated, then continues from
// FromAction: with the same plan, or with req.Plan, validated as the new
// run's plan against the state taken over. Policy and approvals apply as
// to any run. The forked run is read, never changed. Like Run, it returns
// the new run at its next stop; a bad request is a coded error and
// creates nothing.
func (e *Engine) Fork(ctx context.Context, req ForkRequest) (*contracts.Run, error) {
	src, err := e.deps.Store.Load(ctx, req.RunID)
	if err != nil {
		return nil, err
	}
	if len(src.Plans) == 0 {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "run %s has no plan to fork", src.ID).With("run_id", src.ID)
	}
	rev := src.Plans[len(src.Plans)-1]
	again, err := rerun(rev.Plan, req.FromAction)
	if err != nil {
		return nil, err
	}
	seed := forkSeed{state: maps.Clone(src.State)}
	for _, s := range src.Steps {
		if s.PlanVersion == rev.Version && again[s.ActionID] {
			for _, k := range s.Produced {
				delete(seed.state, k)
			}
		}
	}
	plan := req.Plan
	if plan == nil {
		p := clonePlan(&rev.Plan)
		p.Context = nil
		plan = &p
	}
	byID := map[string]string{}
	for _, a := range plan.Actions {
		byID[a.ID] = a.Tool
	}
	last := map[string]int{}
	for i, s := range src.Steps {
		if s.PlanVersion == rev.Version && s.Status == contracts.StepSucceeded && !again[s.ActionID] && byID[s.ActionID] == s.Tool {
			last[s.ActionID] = i
		}
	}
	for _, i := range slices.Sorted(maps.Values(last)) {
		s := src.Steps[i]
		s.PlanVersion, s.Attempt = 1, 1
		seed.steps = append(seed.steps, s)
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
	producer := map[string]string{}
	for _, a := range p.Actions {
		for _, k := range a.Produces {
			producer[k] = a.ID
		}
	}
	again := map[string]bool{from: true}
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
	return again, nil
}
