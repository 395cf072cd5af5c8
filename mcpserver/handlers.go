package mcpserver

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/memory"
)

// runArgs are the arguments plan and execute share.
type runArgs struct {
	RunID    string               `json:"run_id"`
	Goal     string               `json:"goal"`
	Context  string               `json:"context"`
	Session  string               `json:"session_id"`
	Services []string             `json:"services"`
	Plan     json.RawMessage      `json:"plan"`
	Options  contracts.RunOptions `json:"options"`
}

// request builds the engine request for a goal or a caller-supplied plan.
// Without a model the caller must supply the plan, and is told where the
// plan schema is.
func (s *Server) request(ctx context.Context, req mcp.CallToolRequest, a runArgs) (agent.Request, error) {
	r := agent.Request{Goal: strings.TrimSpace(a.Goal), Context: a.Context, Session: a.Session, UserID: identityFrom(ctx).User, Options: a.Options}
	r.Options.Services = a.Services
	// The caller's auto_approve answers configured approvals only: a policy
	// confirmation is for the person (the schema does not offer this field).
	r.Options.AutoApprovePolicy = false
	if len(a.Plan) > 0 {
		p, err := parsePlanArg(a.Plan)
		if err != nil {
			return r, err
		}
		r.Plan = p
		return r, nil
	}
	if r.Goal == "" {
		return r, contracts.Errorf(contracts.CodeInvalidInput, "a goal or a plan is required").With("field", "goal")
	}
	if !s.opts.HasLLM && !s.samples(ctx, req) {
		why := "no LLM endpoint is configured and this client does not offer sampling"
		if req.Params.Task != nil && s.opts.Sampling != nil {
			why = "no LLM endpoint is configured and a task cannot sample the client's model"
		}
		return r, contracts.Errorf(contracts.CodeNoLLM, "%s: supply your own plan (Action Plan JSON Schema at resource %s)", why, uriPlanSchema).
			With("field", "plan").With("schema", uriPlanSchema)
	}
	return r, nil
}

// parsePlanArg parses a caller's plan argument, nil when none was given;
// the error keeps the parser's code and locations and names the argument.
func parsePlanArg(raw json.RawMessage) (*contracts.Plan, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	p, err := contracts.ParsePlan(raw)
	if err != nil {
		return nil, contracts.AsError(err).With("field", "plan")
	}
	return p, nil
}

func (s *Server) handlePlan(ctx context.Context, req mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a runArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if req.Params.RequestState != "" {
		return s.drive(ctx, req, planView, nil)
	}
	r, err := s.request(ctx, req, a)
	if err != nil {
		return nil, err
	}
	return s.drive(ctx, req, planView, func(ctx context.Context) (*contracts.Run, error) {
		return s.opts.Engine.Plan(ctx, r)
	})
}

func (s *Server) handleExecute(ctx context.Context, req mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a runArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if req.Params.RequestState != "" {
		return s.drive(ctx, req, execView, nil)
	}
	given := 0
	for _, set := range []bool{a.RunID != "", a.Goal != "", len(a.Plan) > 0} {
		if set {
			given++
		}
	}
	if given != 1 {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "give exactly one of run_id, goal or plan (got %d)", given).With("field", "run_id")
	}
	if a.RunID != "" {
		// They start a run; a planned run keeps what it was planned with.
		for _, f := range []struct {
			name string
			set  bool
		}{{"session_id", a.Session != ""}, {"context", a.Context != ""}} {
			if f.set {
				return nil, contracts.Errorf(contracts.CodeInvalidInput, "%s goes with a goal or a plan, not with run_id (the run keeps what it was planned with)", f.name).With("field", f.name)
			}
		}
		run, err := s.loadRun(ctx, a.RunID)
		if err != nil {
			return nil, err
		}
		if run.Status == contracts.RunInterrupted && s.elicits(ctx, req, execView) {
			return s.finish(ctx, req, run, nil, execView) // ask now rather than refuse
		}
		return s.drive(ctx, req, execView, func(ctx context.Context) (*contracts.Run, error) {
			return s.opts.Engine.Execute(ctx, a.RunID)
		})
	}
	r, err := s.request(ctx, req, a)
	if err != nil {
		return nil, err
	}
	return s.drive(ctx, req, execView, func(ctx context.Context) (*contracts.Run, error) {
		return s.opts.Engine.Run(ctx, r)
	})
}

type approveArgs struct {
	RunID      string                 `json:"run_id"`
	Decision   contracts.DecisionKind `json:"decision"`
	Plan       json.RawMessage        `json:"plan"`
	Payload    json.RawMessage        `json:"payload"`
	Answers    map[string]any         `json:"answers"`
	Note       string                 `json:"note"`
	FromAction string                 `json:"from_action"`
	Seq        int64                  `json:"seq"`
}

func (s *Server) handleApprove(ctx context.Context, req mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a approveArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if req.Params.RequestState != "" {
		return s.drive(ctx, req, execView, nil)
	}
	run, err := s.loadRun(ctx, a.RunID)
	if err != nil {
		return nil, err
	}
	if a.Decision == contracts.DecisionRetry && run.Status.Final() { // a failed run is forked from its failed step
		for _, f := range []struct {
			name string
			set  bool
		}{{"plan", len(a.Plan) > 0}, {"payload", len(a.Payload) > 0}, {"answers", a.Answers != nil}} {
			if f.set {
				return nil, contracts.Errorf(contracts.CodeInvalidInput, "%s: a retry of a %s run forks its plan from the step that failed and takes no %s (fork_run takes an edited plan)", f.name, run.Status, f.name).With("field", f.name)
			}
		}
		return s.retryRun(ctx, req, raw)
	}
	if a.FromAction != "" {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "from_action: only a retry of a failed or cancelled run takes it (run %s is %s)", run.ID, run.Status).With("field", "from_action")
	}
	d := contracts.Decision{Kind: a.Decision, Payload: a.Payload, Answers: a.Answers, Note: a.Note, By: identityFrom(ctx).User, Seq: a.Seq}
	if d.Plan, err = parsePlanArg(a.Plan); err != nil {
		return nil, err
	}
	return s.drive(ctx, req, execView, func(ctx context.Context) (*contracts.Run, error) {
		return s.opts.Engine.Resume(ctx, a.RunID, d)
	})
}

// loadRun returns a run the caller may see: their own, or any for admins.
// Someone else's run is reported with the store's own not-found error,
// word for word, so no answer tells that an id exists.
func (s *Server) loadRun(ctx context.Context, runID string) (*contracts.Run, error) {
	run, err := s.opts.Engine.Get(ctx, runID)
	if err != nil {
		return nil, err
	}
	id := identityFrom(ctx)
	if run.UserID != id.User && !id.Has(RoleAdmin) {
		return nil, memory.NotFound(runID)
	}
	return run, nil
}

func (s *Server) handleRunStatus(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		RunID string `json:"run_id"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	run, err := s.loadRun(ctx, a.RunID)
	if err != nil {
		return nil, err
	}
	return okResult(run)
}

func (s *Server) handleListRuns(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		Status []contracts.RunStatus `json:"status"`
		User   string                `json:"user"`
		Limit  int                   `json:"limit"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	id := identityFrom(ctx)
	f := memory.Filter{Status: a.Status, UserID: id.User, Limit: a.Limit}
	if f.Limit == 0 {
		f.Limit = 20
	}
	if a.User != "" && a.User != id.User {
		if !id.Has(RoleAdmin) {
			return nil, contracts.Errorf(contracts.CodeForbidden, "listing another user's runs needs the %s role", RoleAdmin).With("field", "user")
		}
		f.UserID = a.User
		if a.User == "*" {
			f.UserID = ""
		}
	}
	runs, err := s.opts.Runs.List(ctx, f)
	if err != nil {
		return nil, err
	}
	if runs == nil {
		runs = []memory.RunSummary{}
	}
	return okResult(map[string]any{"runs": runs, "count": len(runs)})
}

func (s *Server) handleSearchTools(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		Query    string           `json:"query"`
		K        int              `json:"k"`
		Services []string         `json:"services"`
		Risk     []contracts.Risk `json:"risk"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if a.K == 0 {
		a.K = 5
	}
	cands, err := s.opts.Engine.ToolCandidates(ctx, agent.ToolQuery{Goal: a.Query, K: a.K, Services: a.Services, Risk: a.Risk})
	if err != nil {
		return nil, err
	}
	out := make([]hitView, 0, len(cands))
	for _, c := range cands {
		if s.shows(ctx, c.Tool.Contract) {
			out = append(out, hitView{Tool: c.Tool.Name(), Score: c.Score, Contract: c.Tool.Contract})
		}
	}
	return okResult(map[string]any{"hits": out})
}

func (s *Server) handleAddPlugin(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var spec host.PluginSpec
	if err := decodeArgs(raw, &spec); err != nil {
		return nil, err
	}
	if err := s.opts.Admin.AddPlugin(ctx, spec); err != nil {
		return nil, err
	}
	s.log.Info("plugin added over MCP", "plugin", spec.Name, "user", identityFrom(ctx).User)
	return okResult(map[string]any{"added": spec.Name, "plugins": s.opts.Admin.Sources()})
}

func (s *Server) handleRemovePlugin(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if err := s.opts.Admin.RemoveSource(ctx, a.Name); err != nil {
		return nil, err
	}
	s.log.Info("plugin removed over MCP", "plugin", a.Name, "user", identityFrom(ctx).User)
	return okResult(map[string]any{"removed": a.Name, "plugins": s.opts.Admin.Sources()})
}

func (s *Server) handleListPlugins(context.Context, mcp.CallToolRequest, json.RawMessage) (*mcp.CallToolResult, error) {
	return okResult(map[string]any{"plugins": s.opts.Admin.Sources()})
}

// hitView is one search hit as clients see it.
type hitView struct {
	Tool     string             `json:"tool"`
	Score    float64            `json:"score"`
	Contract contracts.Contract `json:"contract"`
}
