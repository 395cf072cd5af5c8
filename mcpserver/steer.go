package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// Steerer is the part of the engine (agent.Engine) that lets a person
// steer a run while it runs: pause it, cancel it, retry it once it failed.
type Steerer interface {
	Pause(ctx context.Context, runID, by string) (*contracts.Run, error)
	Cancel(ctx context.Context, runID, by string) (*contracts.Run, error)
	Retry(ctx context.Context, req agent.ForkRequest) (*contracts.Run, error)
}

// pauseHints: a pause changes where the run stands, not the world, and
// asking twice is asking once.
var pauseHints = hints{idempotent: true}

// steerDefs are pause_run and cancel_run. Cancelling a run for good is a
// tool of its own, not an approve decision, because a running run waits
// for no decision; approve's abort ends a paused or failed step's run.
func (s *Server) steerDefs() []*toolDef {
	if _, ok := s.opts.Engine.(Steerer); !ok {
		return nil
	}
	return []*toolDef{
		{name: "pause_run", title: "Pause a run", input: "run_status.input.json", output: "run.output.json", hints: pauseHints, handle: s.handlePauseRun,
			desc: "Pause one of your runs at its next step boundary (steps in flight finish). It then waits at a paused interrupt: approve it with decision continue, edit (plan: the remaining plan, validated as a new version; finished steps are kept) or abort. A run another server drives pauses within about a second. Returns the run as it stands (still running while the pause is on its way)."},
		{name: "cancel_run", title: "Cancel a run", input: "run_status.input.json", output: "run.output.json", hints: removeHints, handle: s.handleCancelRun,
			desc: "Cancel one of your runs for good (status cancelled, error 4005): at once when it waits or nobody drives it, else at its next step boundary. approve {decision: retry} on a cancelled run forks it from where it stopped."},
	}
}

func (s *Server) handlePauseRun(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	return s.steerRun(ctx, raw, Steerer.Pause, "pause requested: the run stops at its next step boundary")
}

func (s *Server) handleCancelRun(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	return s.steerRun(ctx, raw, Steerer.Cancel, "cancel requested: the run stops at its next step boundary")
}

// steerRun asks for a pause or a cancel of one of the caller's runs (an
// admin may steer anyone's) and returns the run as it stands.
func (s *Server) steerRun(ctx context.Context, raw json.RawMessage, ask func(Steerer, context.Context, string, string) (*contracts.Run, error), pending string) (*mcp.CallToolResult, error) {
	var a struct {
		RunID string `json:"run_id"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if _, err := s.loadRun(ctx, a.RunID); err != nil {
		return nil, err
	}
	run, err := ask(s.opts.Engine.(Steerer), ctx, a.RunID, identityFrom(ctx).User)
	if err != nil {
		return nil, err
	}
	note := ""
	if run.Status == contracts.RunRunning || run.Status == contracts.RunPending {
		note = pending
	}
	return runResult(run, execView, note)
}

// retryRun answers approve {decision: retry} on a failed or cancelled
// run: a new run forked from the step that failed (or from_action),
// owned by the caller; it returns like execute.
func (s *Server) retryRun(ctx context.Context, req mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		RunID      string `json:"run_id"`
		FromAction string `json:"from_action"`
	}
	_ = json.Unmarshal(raw, &a) // approve's schema already checked raw
	fr := agent.ForkRequest{RunID: a.RunID, FromAction: a.FromAction, UserID: identityFrom(ctx).User}
	return s.drive(ctx, req, execView, func(ctx context.Context) (*contracts.Run, error) {
		st, ok := s.opts.Engine.(Steerer)
		if !ok {
			return nil, contracts.Errorf(contracts.CodeInternal, "this engine cannot retry runs")
		}
		return st.Retry(ctx, fr)
	})
}
