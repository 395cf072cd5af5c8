package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/patterns"
)

// TemplateEngine is the part of the engine that keeps workflow templates
// in pattern memory (*agent.Engine implements it). The template tools are
// offered when the server's engine has it.
type TemplateEngine interface {
	SaveTemplate(ctx context.Context, runID, name string) error
	RunTemplate(ctx context.Context, req agent.TemplateRequest) (*contracts.Run, error)
	Templates(ctx context.Context, userID string) ([]patterns.Template, error)
	MatchTemplate(ctx context.Context, run *contracts.Run) *patterns.TemplateMatch
}

// templateDefs are save_template, list_templates and run_template.
func (s *Server) templateDefs() []*toolDef {
	if _, ok := s.opts.Engine.(TemplateEngine); !ok {
		return nil
	}
	return []*toolDef{
		{name: "save_template", title: "Save a run as a template", input: "save_template.input.json", output: "template.output.json", hints: hints{idempotent: true}, handle: s.handleSaveTemplate,
			desc: "Save the plan of one of your completed runs as a named workflow template (a template of that name is replaced). run_template runs it again with new inputs, with no planner call."},
		{name: "list_templates", title: "List templates", input: "empty.input.json", output: "templates.output.json", hints: readHints, handle: s.handleListTemplates,
			desc: "Your saved workflow templates by name: each one's goal, actions (id, tool and literal inputs, the keys run_template's inputs override) and how many runs from it completed or failed."},
		{name: "run_template", title: "Run a template", input: "run_template.input.json", output: "run.output.json", hints: runHints, tasks: true, handle: s.handleRunTemplate,
			desc: "Plan and execute a saved workflow template with new inputs (\"ACTION_ID.FIELD\": value), checked against the live catalog and policy like your own plan, with no planner call. Returns like execute."},
	}
}

// TemplateView is one saved template as list_templates shows it.
type TemplateView struct {
	Name      string           `json:"name"`
	Goal      string           `json:"goal"`
	Actions   []TemplateAction `json:"actions"`
	SavedAt   time.Time        `json:"saved_at"`
	Successes int              `json:"successes"`
	Failures  int              `json:"failures"`
	LastUsed  *time.Time       `json:"last_used,omitempty"`
	// Learned: made by Ordo from a plan that completed twice for this
	// goal, not saved by a person.
	Learned bool `json:"learned,omitempty"`
}

// TemplateAction is one action of a template: what run_template's inputs
// may override is ACTION_ID.FIELD of its literal inputs.
type TemplateAction struct {
	ID     string         `json:"id"`
	Tool   string         `json:"tool"`
	Inputs map[string]any `json:"inputs,omitempty"`
}

// NewTemplateView renders a template for list_templates and `ordo templates`.
func NewTemplateView(t patterns.Template) TemplateView {
	v := TemplateView{Name: t.Name, Goal: t.Plan.Goal, SavedAt: t.SavedAt, Successes: t.Successes, Failures: t.Failures, Actions: []TemplateAction{},
		Learned: t.Learned}
	if t.Successes+t.Failures > 0 {
		v.LastUsed = &t.LastUsed
	}
	for _, a := range t.Plan.Actions {
		v.Actions = append(v.Actions, TemplateAction{ID: a.ID, Tool: a.Tool, Inputs: a.Inputs})
	}
	return v
}

func (s *Server) handleSaveTemplate(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		RunID string `json:"run_id"`
		Name  string `json:"name"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if _, err := s.loadRun(ctx, a.RunID); err != nil { // the caller's run (or an admin's view)
		return nil, err
	}
	te := s.opts.Engine.(TemplateEngine)
	if err := te.SaveTemplate(ctx, a.RunID, strings.TrimSpace(a.Name)); err != nil {
		return nil, err
	}
	run, err := s.opts.Engine.Get(ctx, a.RunID)
	if err != nil {
		return nil, err
	}
	ts, err := te.Templates(ctx, run.UserID)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t.Name == strings.TrimSpace(a.Name) {
			return okResult(map[string]any{"saved": true, "template": NewTemplateView(t)})
		}
	}
	return nil, contracts.Errorf(contracts.CodeInternal, "template %q was saved but is not listed", a.Name)
}

func (s *Server) handleListTemplates(ctx context.Context, _ mcp.CallToolRequest, _ json.RawMessage) (*mcp.CallToolResult, error) {
	ts, err := s.opts.Engine.(TemplateEngine).Templates(ctx, identityFrom(ctx).User)
	if err != nil {
		return nil, err
	}
	out := make([]TemplateView, len(ts))
	for i, t := range ts {
		out[i] = NewTemplateView(t)
	}
	return okResult(map[string]any{"templates": out, "count": len(out)})
}

func (s *Server) handleRunTemplate(ctx context.Context, req mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		Name    string               `json:"name"`
		Goal    string               `json:"goal"`
		Inputs  map[string]any       `json:"inputs"`
		Options contracts.RunOptions `json:"options"`
		Context string               `json:"context"`
		Session string               `json:"session_id"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if req.Params.RequestState != "" {
		return s.drive(ctx, req, execView, nil)
	}
	// As for plan and execute, auto_approve answers configured approvals
	// only, never a policy confirmation.
	a.Options.AutoApprovePolicy = false
	tr := agent.TemplateRequest{Name: strings.TrimSpace(a.Name), UserID: identityFrom(ctx).User, Goal: strings.TrimSpace(a.Goal), Inputs: a.Inputs, Options: a.Options,
		Context: a.Context, Session: a.Session}
	return s.drive(ctx, req, execView, func(ctx context.Context) (*contracts.Run, error) {
		te, ok := s.opts.Engine.(TemplateEngine)
		if !ok {
			te = s.opts.Engine.(TemplateEngine)
		}
		return te.RunTemplate(ctx, tr)
	})
}

// planResult is runResult with, for a plan, the saved template that
// matches the goal (RunView.Template): run_template runs it next time
// without a planner call.
func (s *Server) planResult(ctx context.Context, run *contracts.Run, mode viewMode) (*mcp.CallToolResult, error) {
	te, ok := s.opts.Engine.(TemplateEngine)
	if mode != planView || !ok || run.Status == contracts.RunFailed {
		return runResult(run, mode, "")
	}
	v := newRunView(run, mode)
	v.Template = te.MatchTemplate(ctx, run)
	return okResult(v)
}
