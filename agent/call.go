package agent

import (
	"context"
	"encoding/json"

	"github.com/ordo-run/ordo/contracts"
)

// CallRequest is one direct call of a catalog tool, as the MCP gateway
// makes for a client (call_tool, published catalog tools).
type CallRequest struct {
	Tool   string
	Args   json.RawMessage // a JSON object
	UserID string
	Scopes []string
}

// directGoal prefixes the goal of every direct call's run, so that an
// operator tells them from planned runs in a list.
const directGoal = "gateway call "

// DirectAction is the id of a direct call's one action.
const DirectAction = "a1"

// Call makes one tool call as a one-action run, with everything a plan
// step gets: the run id, policy (a denial fails the run closed; a
// confirmation policy asks for stops it at a step_approval interrupt for
// Confirm or Resume), payload and result validation, redaction, an
// idempotency key, the lease and the store's sequence checks. It is never
// re-planned and its answer is the tool's result (the last step's Result).
// The stored plan holds the arguments redacted; the arguments themselves
// are kept in memory only while this call drives the run, so a call whose
// secrets were lost (a crash, an approval given elsewhere) fails closed
// rather than sending the redaction marker. Like Plan, a run that fails is
// returned with a nil error and run.Error set.
func (e *Engine) Call(ctx context.Context, req CallRequest) (_ *contracts.Run, err error) {
	t, ok := e.deps.Tools.Lookup(req.Tool)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeUnknownTool, "no tool %q in the catalog", req.Tool).With("tool", req.Tool).With("field", "tool")
	}
	var inputs map[string]any
	if err := json.Unmarshal(redact(t, req.Args), &inputs); err != nil || inputs == nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "arguments of %s: want a JSON object", t.Name()).With("field", "arguments")
	}
	intent := "write"
	if t.Contract.RiskLevel == contracts.RiskRead {
		intent = "read"
	}
	plan := &contracts.Plan{Version: contracts.PlanVersion, Goal: directGoal + t.Name(), Timezone: "UTC",
		Actions: []contracts.Action{{ID: DirectAction, Tool: t.Name(), Intent: intent, Requires: []string{}, Produces: []string{}, Inputs: inputs}}}
	run, err := e.Run(ctx, Request{Plan: plan, UserID: req.UserID, Source: "gateway", args: req.Args,
		Options: contracts.RunOptions{HITL: &contracts.HITLSwitches{}, Scopes: req.Scopes, Timezone: "UTC", Direct: true}})
	if run != nil {
		e.args.Delete(run.ID)
	}
	return run, err
}

// Confirm answers the step_approval interrupt of a direct call (Call)
// with a person's decision, giving the call's arguments again (they are
// not stored with their secrets); they must be the arguments the run was
// started with, which the caller checks.
func (e *Engine) Confirm(ctx context.Context, runID string, d contracts.Decision, args json.RawMessage) (*contracts.Run, error) {
	e.args.Store(runID, args)
	defer e.args.Delete(runID)
	return e.Resume(ctx, runID, d)
}

// directPayload gives a direct call's payload and what it misses: its
// arguments (the caller's data: nothing is missing) while Call or Confirm
// drives the run, else the bound payload, refused when it holds a
// redacted secret.
func (e *Engine) directPayload(run *contracts.Run, tool *contracts.Tool, bound json.RawMessage, missing []string) (json.RawMessage, []string, error) {
	if args, ok := e.args.Load(run.ID); ok {
		return args.(json.RawMessage), nil, nil
	}
	if !redactedFree(tool, bound) {
		return nil, nil, contracts.Errorf(contracts.CodeInvalidInput,
			"the secret arguments of this direct call of %s are not kept once the call returns; call the tool again", tool.Name()).
			With("tool", tool.Name()).With("run", run.ID)
	}
	return bound, missing, nil
}

// redactedFree reports whether no secret field of payload holds the
// redaction marker.
func redactedFree(tool *contracts.Tool, payload json.RawMessage) bool {
	var obj map[string]any
	if json.Unmarshal(payload, &obj) != nil {
		return true
	}
	for f, v := range obj {
		if contracts.IsSecretField(tool.Contract.SecretFields, f) && v == contracts.Redacted {
			return false
		}
	}
	return true
}
