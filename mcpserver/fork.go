package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// forkArgs are fork_run's arguments.
type forkArgs struct {
	RunID      string          `json:"run_id"`
	FromAction string          `json:"from_action"`
	Plan       json.RawMessage `json:"plan"`
}

// handleForkRun starts a new run, owned by the caller, from one of the
// caller's runs (an admin may fork anyone's): the recorded results of the
// steps before from_action are taken over, from_action and its dependents
// run again (agent.Engine.Fork). It returns like execute, and an
// interrupt of the new run is asked about inline the same way.
func (s *Server) handleForkRun(ctx context.Context, req mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a forkArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if req.Params.RequestState != "" {
		return s.drive(ctx, req, execView, nil)
	}
	if _, err := s.loadRun(ctx, a.RunID); err != nil { // ownership: the caller's own run, or an admin
		return nil, err
	}
	fr := agent.ForkRequest{RunID: a.RunID, FromAction: a.FromAction, UserID: identityFrom(ctx).User}
	var err error
	if fr.Plan, err = parsePlanArg(a.Plan); err != nil {
		return nil, err
	}
	return s.drive(ctx, req, execView, func(ctx context.Context) (*contracts.Run, error) {
		return s.opts.Engine.Fork(ctx, fr)
	})
}
