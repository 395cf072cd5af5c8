package agent

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ordo-run/ordo/contracts"
)

// SourceRepin is the source of a plan version that re-pins the one before
// to changed tool contracts: the same remaining actions, checked again.
const SourceRepin = "repin"

// A plan version is pinned to the contracts it was checked against
// (PlanRevision.Pins). A person who approves a plan or a step approves it
// with those contracts; a tool that changes its contract afterwards (a
// plugin replaced, an upstream server's new schema or description) while
// keeping its risk and tags passes policy, so before a stored plan goes on
// executing and before each step the engine compares the tools' contracts
// with the pins. A change (contractChanges) is checked against the plan
// again: a plan that no longer checks fails the step (CodeContractChanged);
// one a person approved waits at a contract_changed interrupt; any other
// is re-pinned (repin) and runs.

// pinsOf is the contracts p's tools have now, by tool.
func (e *Engine) pinsOf(p *contracts.Plan) map[string]contracts.ContractPin {
	out := map[string]contracts.ContractPin{}
	for _, a := range p.Actions {
		if _, ok := out[a.Tool]; ok {
			continue
		}
		if t, ok := e.deps.Tools.Lookup(a.Tool); ok {
			out[a.Tool] = t.Pin()
		}
	}
	return out
}

// pinned is what a drive of rev compares the tools with: rev's pins or,
// for a version an older build checked (no pins), the contracts as they
// are when it is loaded.
func (e *Engine) pinned(rev contracts.PlanRevision) map[string]contracts.ContractPin {
	if rev.Pins != nil {
		return rev.Pins
	}
	return e.pinsOf(&rev.Plan)
}

// unpinned reports whether tool's contract is not the one pinned (a tool
// without a pin is left to the plan check).
func unpinned(pins map[string]contracts.ContractPin, tool *contracts.Tool) bool {
	pin, ok := pins[tool.Name()]
	return ok && pin.Hash != tool.Hash()
}

// contractChanges lists the tools of p's actions not done whose contract
// is no longer the pinned one, each with the actions that call it, in plan
// order. A tool that left the catalog is the plan check's to refuse.
func (e *Engine) contractChanges(pins map[string]contracts.ContractPin, p *contracts.Plan, done map[string]string) []contracts.ContractChange {
	var out []contracts.ContractChange
	at := map[string]int{}
	for _, a := range p.Actions {
		if _, ok := done[a.ID]; ok {
			continue
		}
		if i, ok := at[a.Tool]; ok {
			out[i].Actions = append(out[i].Actions, a.ID)
			continue
		}
		t, ok := e.deps.Tools.Lookup(a.Tool)
		if !ok || !unpinned(pins, t) {
			continue
		}
		now := t.Pin()
		c := contracts.ContractChange{Tool: a.Tool, Actions: []string{a.ID}, Fields: pins[a.Tool].Changed(now), Old: pins[a.Tool], New: now}
		if slices.Contains(c.Fields, contracts.PartDescription) {
			c.Description = printable(clipTo(t.Contract.Description, MaxCandidateDescription))
		}
		at[a.Tool] = len(out)
		out = append(out, c)
	}
	return out
}

// changeNote says in a line which tools changed what.
func changeNote(changes []contracts.ContractChange) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = fmt.Sprintf("%s (%s)", c.Tool, strings.Join(c.Fields, ", "))
	}
	return strings.Join(parts, "; ")
}

// approvedByPerson reports whether a person approved plan version rev
// (plan approval, an edit, a contract_changed approval that made it) or a
// step of it that calls a changed tool (step approval or a policy
// confirmation, a retry after a failure): they approved it with the
// pinned contracts. Pattern memory's approvals, made with the contract of
// the moment, do not count; nor does AutoApprove, which records none.
func approvedByPerson(run *contracts.Run, rev contracts.PlanRevision, changes []contracts.ContractChange) bool {
	if rev.Source == "edit" {
		return true
	}
	changed := map[string]bool{}
	for _, c := range changes {
		for _, id := range c.Actions {
			changed[id] = true
		}
	}
	for _, d := range run.Decisions {
		in, k := d.Interrupt, d.Decision.Kind
		if d.Decision.By == DecidedByMemory || (k != contracts.DecisionApprove && k != contracts.DecisionEdit && k != contracts.DecisionRetry) {
			continue
		}
		switch in.Kind {
		case contracts.InterruptPlanApproval:
			if in.PlanVersion == rev.Version {
				return true
			}
		case contracts.InterruptContractChanged:
			if in.PlanVersion == rev.Version-1 && rev.Source == SourceRepin {
				return true
			}
		case contracts.InterruptStepApproval, contracts.InterruptStepFailed:
			if in.PlanVersion == rev.Version && changed[in.ActionID] {
				return true
			}
		}
	}
	return false
}

// contractChanged handles changed contracts of the stored plan about to
// run: a person's approval stops the run at a contract_changed interrupt;
// without one the plan is re-pinned as a new version, and runs.
func (e *Engine) contractChanged(ctx context.Context, run *contracts.Run, rev contracts.PlanRevision, changes []contracts.ContractChange) (stop, error) {
	if approvedByPerson(run, rev, changes) {
		return stopInterrupted, e.interrupt(ctx, run, &contracts.Interrupt{
			Kind:        contracts.InterruptContractChanged,
			Message:     "the contract of " + changeNote(changes) + " changed since it was approved: approve the plan with the new contracts, edit or reject it",
			PlanVersion: rev.Version, Mermaid: rev.Mermaid, Policy: run.Policy, Changes: changes,
		})
	}
	if err := e.repin(ctx, run, changes, "automatic"); err != nil {
		return stopFailed, err
	}
	if run.Status == contracts.RunFailed {
		return stopFailed, nil
	}
	return stopRepinned, nil
}

// repin makes the remaining actions of the current plan a new version
// pinned to the changed contracts (changes' New: what a person approved,
// so a later change is asked about again), checked again against the
// catalog. A plan that no longer checks fails the run.
func (e *Engine) repin(ctx context.Context, run *contracts.Run, changes []contracts.ContractChange, by string) error {
	cur := run.Plans[len(run.Plans)-1]
	rest, err := remaining(run, cur.Version, &cur.Plan)
	if err != nil {
		return err
	}
	reason := "contract changed (" + by + "): " + changeNote(changes)
	rev, decisions, _, err := e.checkPlan(run, rest, SourceRepin, reason, slices.Collect(maps.Keys(run.State)))
	switch {
	case rev != nil && err != nil: // policy denies it now
		e.commitPlan(ctx, run, rev, decisions)
		return e.fail(ctx, run, err)
	case err != nil:
		if broken := brokenContract(changes, err); broken != nil {
			return e.fail(ctx, run, broken)
		}
		return e.fail(ctx, run, planFailed("the plan no longer checks against the catalog", err))
	}
	for _, c := range changes {
		rev.Pins[c.Tool] = c.New
	}
	rev.KeysFrom = keysFrom(cur)
	e.commitPlan(ctx, run, rev, decisions)
	return nil
}

// brokenContract is the error of a plan that no longer checks (cause)
// because of a changed contract: nil when cause names an action that
// calls no changed tool (it is not the change's doing).
func brokenContract(changes []contracts.ContractChange, cause error) *contracts.Error {
	ce := contracts.AsError(cause)
	c, action := changes[0], changes[0].Actions[0]
	if id, ok := ce.Details["action"].(string); ok {
		i := slices.IndexFunc(changes, func(c contracts.ContractChange) bool { return slices.Contains(c.Actions, id) })
		if i < 0 {
			return nil
		}
		c, action = changes[i], id
	}
	return contracts.Errorf(contracts.CodeContractChanged, "the contract of %s changed since the plan was checked (%s) and the plan no longer checks against it: %w",
		c.Tool, strings.Join(c.Fields, ", "), cause).
		With("action", action).With("tool", c.Tool).With("fields", c.Fields).
		With("old_hash", c.Old.Hash).With("new_hash", c.New.Hash).With("cause_code", int(ce.Code))
}

// failBroken records the step a changed contract broke (brokenContract's
// error) as failed, as a failure to re-plan or ask about.
func (e *Engine) failBroken(ctx context.Context, run *contracts.Run, version int, ce *contracts.Error) *failure {
	action, _ := ce.Details["action"].(string)
	tool, _ := ce.Details["tool"].(string)
	now := e.now()
	run.Steps = append(run.Steps, contracts.StepRecord{ActionID: action, Tool: tool, PlanVersion: version,
		Attempt: attempts(run, version, action) + 1, Status: contracts.StepFailed, Error: ce, StartedAt: now, EndedAt: now})
	e.emit(ctx, run, EventStepFailed, action, tool, ce.Message)
	return &failure{action, ce}
}

// finished is the actions of plan version v that succeeded or were
// skipped, with their tools.
func finished(run *contracts.Run, v int) map[string]string {
	done := map[string]string{}
	for _, s := range run.Steps {
		if s.PlanVersion == v && (s.Status == contracts.StepSucceeded || s.Status == contracts.StepSkipped) {
			done[s.ActionID] = s.Tool
		}
	}
	return done
}

// keysFrom is the plan version whose idempotency keys rev's actions use.
func keysFrom(rev contracts.PlanRevision) int {
	if rev.KeysFrom > 0 {
		return rev.KeysFrom
	}
	return rev.Version
}

// stepKey is the idempotency key of an attempt of action id in plan
// version: run, plan version, action, attempt, where a re-pinned version
// keeps the version its actions were planned in (keysFrom) and counts on
// from the attempts the versions since made, so a call in flight at a
// crash that a contract change then re-pins is re-issued under the key it
// had, and no two attempts share one. An edit or a re-plan makes new keys.
func stepKey(run *contracts.Run, version int, id string, attempt int) string {
	from := version
	if version >= 1 && version <= len(run.Plans) {
		from = keysFrom(run.Plans[version-1])
	}
	for v := from; v < version; v++ { // a chain of re-pins: each of the one before
		attempt += attempts(run, v, id)
	}
	return run.ID + "/v" + strconv.Itoa(from) + "/" + id + "/" + strconv.Itoa(attempt)
}
