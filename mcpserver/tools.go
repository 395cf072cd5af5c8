package mcpserver

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/ordo-run/ordo/contracts"
)

//go:embed schemas/*.json
var schemaFS embed.FS

// hints are a tool's MCP annotations; every one is set explicitly because
// mcp-go defaults destructiveHint and openWorldHint to true.
type hints struct{ readOnly, destructive, idempotent, openWorld bool }

var (
	readHints = hints{readOnly: true, idempotent: true}
	planHints = hints{}
	runHints  = hints{destructive: true, openWorld: true}
	// add_plugin starts a program on the server: destructive, so clients
	// that ask before such calls ask. add_upstream also reaches out to a
	// server it names: open world.
	addHints      = hints{destructive: true}
	upstreamHints = hints{destructive: true, openWorld: true}
	removeHints   = hints{destructive: true, idempotent: true}
)

// toolDef is one MCP tool: its description, schemas, gating and handler.
type toolDef struct {
	name, title, desc string
	input, output     string // schema file names under schemas/
	hints             hints
	admin             bool
	tasks             bool // may run as an MCP task
	// confirm, when set, describes a call to the person, who must approve
	// it before it runs over stdio (confirm.go); pending holds the asks.
	confirm confirmer
	pending *confirmations
	handle  func(ctx context.Context, req mcp.CallToolRequest, args json.RawMessage) (*mcp.CallToolResult, error)

	validator *jsonschema.Schema
}

func (s *Server) toolDefs() []*toolDef {
	defs := []*toolDef{
		{name: "plan", title: "Plan a goal", input: "plan.input.json", output: "run.output.json", hints: planHints, tasks: true, handle: s.handlePlan,
			desc: "Turn a goal into a validated Action Plan (or validate your own plan), apply policy, and stop before executing. Returns run_id, status (ready | awaiting_approval | needs_clarification), the plan, its Mermaid graph and policy decisions."},
		{name: "execute", title: "Execute a run", input: "execute.input.json", output: "run.output.json", hints: runHints, tasks: true, handle: s.handleExecute,
			desc: "Execute a planned run (run_id), or plan and execute a goal or a plan in one call. Runs until completed, failed, rejected or interrupted (waiting for approval or input). Sends progress notifications when given a progress token; supports MCP tasks for long runs."},
		{name: "approve", title: "Answer an interrupted run", input: "approve.input.json", output: "run.output.json", hints: runHints, tasks: true, handle: s.handleApprove,
			desc: "Resume an interrupted run with a decision: approve, edit (plan or payload), reject, skip (a step) or answer (questions or missing inputs). Returns like execute."},
		{name: "fork_run", title: "Fork a run", input: "fork_run.input.json", output: "run.output.json", hints: runHints, tasks: true, handle: s.handleForkRun,
			desc: "Start a new run from one of your runs, from one action on: the recorded results of the steps before from_action are taken over (no tool or model call repeated), from_action and the actions that depend on it run again, optionally with an edited plan. The forked run is not changed. Use it to retry a failed run from the step that failed. Returns like execute."},
		{name: "run_status", title: "Run record", input: "run_status.input.json", output: "run_status.output.json", hints: readHints, handle: s.handleRunStatus,
			desc: "One run's full record: plan versions, policy, steps, state, decisions, errors and result."},
	}
	if s.opts.Runs != nil {
		defs = append(defs, &toolDef{name: "list_runs", title: "List runs", input: "list_runs.input.json", output: "list_runs.output.json", hints: readHints, handle: s.handleListRuns,
			desc: "List runs, newest first, optionally by status."})
	}
	defs = append(defs, &toolDef{name: "search_tools", title: "Search tools", input: "search_tools.input.json", output: "search_tools.output.json", hints: readHints, handle: s.handleSearchTools,
		desc: "The catalog's best tools for a query, with their contracts (useful before writing your own plan); tools whose source is down are left out."})
	if s.opts.Admin != nil {
		defs = append(defs,
			&toolDef{name: "add_plugin", title: "Add a plugin", input: "add_plugin.input.json", output: "plugins.output.json", hints: addHints, admin: true, handle: s.handleAddPlugin,
				confirm: s.confirmAddPlugin, pending: newConfirmations(confirmTTL),
				desc: "Admin: start a plugin executable (checksum-verified when sha256 is given) and add its tools to the catalog. Over stdio the person confirms first (elicitation)."},
			&toolDef{name: "add_upstream", title: "Add an upstream MCP server", input: "add_upstream.input.json", output: "plugins.output.json", hints: upstreamHints, admin: true, handle: s.handleAddUpstream,
				confirm: s.confirmAddUpstream, pending: newConfirmations(confirmTTL),
				desc: "Admin: connect an upstream MCP server (stdio: mcp command line or command argv; HTTP: mcp_url with bearer_token_env) and add its tools to the catalog as NAME.tool, risk from their annotations. Over stdio the person confirms first (elicitation). remove_plugin removes it; list_plugins lists it."},
			&toolDef{name: "remove_plugin", title: "Remove a plugin", input: "remove_plugin.input.json", output: "plugins.output.json", hints: removeHints, admin: true, handle: s.handleRemovePlugin,
				desc: "Admin: drain and stop a plugin or an upstream MCP server and remove its tools from the catalog."},
			&toolDef{name: "list_plugins", title: "List plugins", input: "empty.input.json", output: "plugins.output.json", hints: readHints, admin: true, handle: s.handleListPlugins,
				desc: "Admin: the loaded plugins and upstream MCP servers and their state."},
		)
	}
	defs = append(defs, s.templateDefs()...)
	defs = append(defs, s.steerDefs()...)
	defs = append(defs, s.sessionDefs()...)
	return append(defs, s.gatewayDefs()...)
}

func (s *Server) registerTools() error {
	s.tools = map[string]*toolDef{}
	var own []server.ServerTool
	for _, d := range s.toolDefs() {
		in, err := loadSchema(d.input)
		if err != nil {
			return err
		}
		out, err := loadSchema(d.output)
		if err != nil {
			return err
		}
		if d.validator, err = compileSchema(d.input, in); err != nil {
			return err
		}
		// NewToolWithRawSchema, because NewTool's default input schema
		// would conflict with the raw one when the tool is listed.
		tool := mcp.NewToolWithRawSchema(d.name, d.desc, in)
		opts := []mcp.ToolOption{
			mcp.WithToolTitle(d.title),
			mcp.WithRawOutputSchema(out),
			mcp.WithToolAnnotation(mcp.ToolAnnotation{
				Title:           d.title,
				ReadOnlyHint:    mcp.ToBoolPtr(d.hints.readOnly),
				DestructiveHint: mcp.ToBoolPtr(d.hints.destructive),
				IdempotentHint:  mcp.ToBoolPtr(d.hints.idempotent),
				OpenWorldHint:   mcp.ToBoolPtr(d.hints.openWorld),
			}),
		}
		if d.tasks {
			opts = append(opts, mcp.WithTaskSupport(mcp.TaskSupportOptional))
		}
		for _, o := range opts {
			o(&tool)
		}
		s.tools[d.name] = d
		own = append(own, server.ServerTool{Tool: tool, Handler: s.wrap(d)})
	}
	s.publish(own, nil)
	if hooks := s.mcp.GetHooks(); hooks != nil {
		hooks.AddOnRequestInitialization(s.refuseStdioAdmin)
	}
	return nil
}

// publish is the one place tools are added to or removed from the mcp-go
// server: Ordo's own tools (registerTools) and the catalog tools the
// gateway publishes and withdraws (gateway.apply). The server notifies
// every session once per non-empty change.
func (s *Server) publish(add []server.ServerTool, remove []string) {
	if len(remove) > 0 {
		s.mcp.DeleteTools(remove...)
	}
	if len(add) > 0 {
		s.mcp.AddTools(add...)
	}
}

// refuseStdioAdmin answers a stdio client's call of an admin tool when
// the client lacks the admin role (`ordo serve` without mcp.stdio_admin).
// The tools are hidden from it (filterTools), and mcp-go would answer the
// call "tool not found", which does not say that they are off on purpose
// nor how an operator turns them on. HTTP callers get 403 (httpauth.go).
func (s *Server) refuseStdioAdmin(ctx context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok || !onStdio(ctx) || identityFrom(ctx).Has(RoleAdmin) {
		return nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Method != string(mcp.MethodToolsCall) {
		return nil
	}
	if d := s.tools[m.Params.Name]; d == nil || !d.admin {
		return nil
	}
	return contracts.Errorf(contracts.CodeForbidden, "tool %q: the admin tools are off for the stdio client; an operator turns them on with mcp.stdio_admin: true in Ordo's configuration (each add_plugin and add_upstream then asks the person)", m.Params.Name).
		With("tool", m.Params.Name)
}

// loadSchema reads an embedded schema and inlines the shared run options
// where it refers to them, so every published schema is self-contained.
func loadSchema(name string) (json.RawMessage, error) {
	data, err := schemaFS.ReadFile("schemas/" + name)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "schema %s: %w", name, err)
	}
	if !bytes.Contains(data, []byte(`"#/$defs/options"`)) {
		return data, nil
	}
	opts, err := schemaFS.ReadFile("schemas/options.json")
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "schema options: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "schema %s: %w", name, err)
	}
	doc["$defs"] = map[string]any{"options": json.RawMessage(opts)}
	return json.Marshal(doc)
}

func compileSchema(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem:///" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "schema %s: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "schema %s: %w", name, err)
	}
	return sch, nil
}

// wrap binds a task call to its task (tasks.detach), checks the caller's
// role and the arguments against the tool's input schema, then runs the
// handler; every Ordo error becomes a tool error result carrying its code,
// never a protocol error.
func (s *Server) wrap(d *toolDef) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.Task != nil {
			var release func()
			var err error
			if ctx, release, err = s.tasks.detach(ctx, taskTTL(req)); err != nil {
				return errorResult(err), nil
			}
			defer release()
		}
		id := identityFrom(ctx)
		if d.admin && !id.Has(RoleAdmin) {
			return errorResult(contracts.Errorf(contracts.CodeForbidden, "tool %q needs the %s role", d.name, RoleAdmin).
				With("tool", d.name).With("user", id.User)), nil
		}
		args, err := s.checkArgs(d, req)
		if err != nil {
			return errorResult(err), nil
		}
		if d.confirm != nil && onStdio(ctx) {
			ask, confirmed, err := s.confirmed(ctx, req, d, args)
			if err != nil {
				return errorResult(err), nil
			}
			if ask != nil {
				return ask, nil
			}
			args = confirmed
		}
		res, err := d.handle(ctx, req, args)
		if err != nil {
			if ctx.Err() != nil && contracts.CodeOf(err) == contracts.CodeInternal {
				return nil, ctx.Err() // cancelled: let mcp-go end the request or task
			}
			s.log.Info("tool call failed", "tool", d.name, "user", id.User, "code", int(contracts.CodeOf(err)), "err", err)
			return errorResult(err), nil
		}
		return res, nil
	}
}

func (s *Server) checkArgs(d *toolDef, req mcp.CallToolRequest) (json.RawMessage, error) {
	raw, err := rawArguments(req)
	if err != nil {
		return nil, err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "arguments are not JSON: %w", err).With("field", "arguments")
	}
	if err := d.validator.Validate(v); err != nil {
		field, why := schemaFailure(err)
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "%s: argument %s: %s", d.name, field, why).
			With("field", field).With("tool", d.name)
	}
	return raw, nil
}

// taskTTL is how long mcp-go keeps a task call's task (guard bounds it).
func taskTTL(req mcp.CallToolRequest) time.Duration {
	if ttl := req.Params.Task.TTL; ttl != nil && *ttl > 0 {
		return time.Duration(*ttl) * time.Millisecond
	}
	return maxTaskTTL
}

// rawArguments returns a call's arguments as JSON ({} when absent or null).
func rawArguments(req mcp.CallToolRequest) (json.RawMessage, error) {
	if raw := req.Params.RawArguments; len(raw) > 0 && string(raw) != "null" {
		return raw, nil
	}
	if req.Params.Arguments == nil {
		return json.RawMessage(`{}`), nil
	}
	raw, err := json.Marshal(req.Params.Arguments)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "arguments: %w", err).With("field", "arguments")
	}
	return raw, nil
}

// schemaFailure names the deepest failing location of a validation error.
func schemaFailure(err error) (field, why string) {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return "arguments", err.Error()
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	field = "arguments"
	if len(ve.InstanceLocation) > 0 {
		field = strings.Join(ve.InstanceLocation, ".")
	}
	return field, ve.Error()
}

// decodeArgs decodes validated arguments into the handler's struct.
func decodeArgs(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return contracts.Errorf(contracts.CodeInvalidInput, "arguments: %w", err).With("field", "arguments")
	}
	return nil
}
