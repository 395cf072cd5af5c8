package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/agent/policy"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
)

// Gateway makes Ordo a policy-gated tool gateway (config expose_tools):
// every catalog tool is published as an MCP tool of Ordo, and call_tool
// calls any of them by catalog id. Each call passes the tenant policy,
// the contract's validation (Tools.Call) and is recorded in Audit.
type Gateway struct {
	// Tools is the live catalog; *host.Host satisfies it.
	Tools GatewayTools
	// Policy is the tenant policy; give the engine's (agent.Config.Policy),
	// so a direct call is judged like the same call inside a plan.
	Policy policy.Config
	// Audit receives one run record per call. Give the engine's run store,
	// so run_status and list_runs show the records.
	Audit AuditStore
	// Scopes, when set, gives a caller's granted scopes (as the engine's
	// runs get them); without it only Policy.GrantedScopes count.
	Scopes func(user string) []string
	// ConfirmTTL bounds how long an inline confirmation may take
	// (default 10 minutes).
	ConfirmTTL time.Duration
}

// GatewayTools is what the gateway needs of the catalog.
type GatewayTools interface {
	Lookup(name string) (*contracts.Tool, bool)
	List() []*contracts.Tool
	Call(ctx context.Context, tool string, payload json.RawMessage, idempotencyKey string) (json.RawMessage, error)
	Subscribe(ctx context.Context) <-chan host.CatalogEvent
}

// AuditStore keeps gateway call records; memory.Checkpointer satisfies it.
type AuditStore interface {
	Save(ctx context.Context, run *contracts.Run) error
}

// gatewayGoal prefixes the goal of every gateway record, so an operator
// can tell gateway calls from planned runs in list_runs.
const gatewayGoal = "gateway call "

// stateConfirm prefixes the request state of an inline confirmation.
const stateConfirm = "confirm:"

// maxToolName is the longest published name: clients that prefix server
// names (mcp__ordo__...) must stay within common 64-character limits.
const maxToolName = 64

// collectWindow is how long catalog events are gathered into one
// tools/list_changed notification after the first of a burst.
const collectWindow = 20 * time.Millisecond

// gateway is the running state of Options.Gateway.
type gateway struct {
	cfg     Gateway
	s       *Server
	confirm *confirmations
	stop    context.CancelFunc
	done    chan struct{}

	mu     sync.Mutex
	byName map[string]string // published MCP name -> catalog id
	byID   map[string]published
}

type published struct {
	name     string
	contract []byte // JSON of the contract it was published from
}

func (s *Server) newGateway() (*gateway, error) {
	cfg := s.opts.Gateway
	switch {
	case cfg.Tools == nil:
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "mcpserver: the gateway needs the tool catalog").With("field", "gateway.tools")
	case cfg.Audit == nil:
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "mcpserver: the gateway needs an audit store").With("field", "gateway.audit")
	}
	if cfg.ConfirmTTL <= 0 {
		cfg.ConfirmTTL = 10 * time.Minute
	}
	return &gateway{cfg: *cfg, s: s, confirm: newConfirmations(cfg.ConfirmTTL), byName: map[string]string{}, byID: map[string]published{}}, nil
}

// gatewayDefs are the meta-tools of the gateway: call_tool, when it is on.
func (s *Server) gatewayDefs() []*toolDef {
	if s.opts.Gateway == nil {
		return nil
	}
	return []*toolDef{{name: "call_tool", title: "Call a catalog tool", input: "call_tool.input.json", output: "call_tool.output.json",
		hints: runHints, handle: s.handleCallTool,
		desc: "Call one catalog tool by id (see search_tools) with its arguments, through Ordo's policy: a tool that needs confirmation is asked about inline when you support elicitation, otherwise it waits as a run for the approve tool. Every call is recorded as a run (list_runs, run_status)."}}
}

// startGateway publishes the catalog and follows its changes until Close.
func (s *Server) startGateway() error {
	if s.opts.Gateway == nil {
		return nil
	}
	g, err := s.newGateway()
	if err != nil {
		return err
	}
	for name := range s.tools {
		if strings.Contains(name, "__") {
			return contracts.Errorf(contracts.CodeInternal, "tool %q would clash with published catalog tools", name)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	g.stop, g.done = stop, make(chan struct{})
	// Subscribe first, then publish what is there: any change in between
	// arrives as an event, so the published set converges on the catalog.
	events := g.cfg.Tools.Subscribe(ctx)
	var now []host.CatalogEvent
	for _, t := range g.cfg.Tools.List() {
		now = append(now, host.CatalogEvent{Kind: host.Added, Tool: t.Name(), Contract: t.Contract})
	}
	g.apply(now)
	s.gw = g
	go g.follow(events)
	return nil
}

// Close stops following the catalog. The server keeps serving the tools
// it published last.
func (s *Server) Close() error {
	if s.gw != nil {
		s.gw.stop()
		<-s.gw.done
	}
	return nil
}

// follow applies catalog events in bursts, so adding an upstream with
// many tools sends one tools/list_changed, not one per tool.
func (g *gateway) follow(events <-chan host.CatalogEvent) {
	defer close(g.done)
	for ev := range events {
		batch := []host.CatalogEvent{ev}
		window := time.NewTimer(collectWindow)
	gather:
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					break gather
				}
				batch = append(batch, ev)
			case <-window.C:
				break gather
			}
		}
		window.Stop()
		g.apply(batch)
	}
}

// apply publishes added and changed tools and withdraws removed ones; the
// mcp-go server notifies every session once per AddTools/DeleteTools.
func (g *gateway) apply(batch []host.CatalogEvent) {
	last := map[string]host.CatalogEvent{}
	for _, ev := range batch {
		last[ev.Tool] = ev
	}
	var adds []server.ServerTool
	var dels []string
	g.mu.Lock()
	for _, id := range slices.Sorted(maps.Keys(last)) {
		ev := last[id]
		old, had := g.byID[id]
		if ev.Kind == host.Removed {
			if had {
				delete(g.byID, id)
				delete(g.byName, old.name)
				dels = append(dels, old.name)
			}
			continue
		}
		raw, _ := json.Marshal(ev.Contract)
		if had && string(old.contract) == string(raw) {
			continue
		}
		name := gatewayName(id)
		if other, taken := g.byName[name]; taken && other != id {
			g.s.log.Warn("catalog tool not published: its MCP name is taken", "tool", id, "name", name, "by", other)
			continue
		}
		tool, err := publishedTool(name, ev.Contract)
		if err != nil {
			g.s.log.Warn("catalog tool not published", "tool", id, "err", err)
			if had { // the new contract cannot be published: withdraw the old one
				delete(g.byID, id)
				delete(g.byName, old.name)
				dels = append(dels, old.name)
			}
			continue
		}
		g.byID[id] = published{name: name, contract: raw}
		g.byName[name] = id
		adds = append(adds, server.ServerTool{Tool: tool, Handler: g.handler(id)})
	}
	g.mu.Unlock()
	if len(dels) > 0 {
		g.s.mcp.DeleteTools(dels...)
	}
	if len(adds) > 0 {
		g.s.mcp.AddTools(adds...)
	}
}

// gatewayName is a catalog id as an MCP tool name: "." becomes "__", which
// Ordo's own tool names never contain, so the two cannot clash. An id
// whose mapping could be read two ways (it holds "__", or "_" next to a
// ".") or that is too long gets "___" and 8 hex of its SHA-256 instead;
// plain mapped names never hold "___", so the forms stay apart.
func gatewayName(id string) string {
	name := strings.ReplaceAll(id, ".", "__")
	if !strings.Contains(id, "__") && !strings.Contains(id, "_.") && !strings.Contains(id, "._") && len(name) <= maxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(id))
	suffix := "___" + hex.EncodeToString(sum[:4])
	if len(name) > maxToolName-len(suffix) {
		name = name[:maxToolName-len(suffix)]
	}
	return name + suffix
}

// publishedTool is a contract as an MCP tool: its input schema (an object
// schema, as MCP requires), its output schema when it describes an
// object, and annotations from its risk level.
func publishedTool(name string, c contracts.Contract) (mcp.Tool, error) {
	var in map[string]any
	if err := json.Unmarshal(c.InputSchema, &in); err != nil {
		return mcp.Tool{}, fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	switch in["type"] {
	case nil:
		in["type"] = "object"
	case "object":
	default:
		return mcp.Tool{}, fmt.Errorf("input schema type %v: MCP tools take objects (use call_tool)", in["type"])
	}
	inRaw, err := json.Marshal(in)
	if err != nil {
		return mcp.Tool{}, err
	}
	desc := strings.TrimSpace(c.Description)
	if desc != "" {
		desc += "\n\n"
	}
	desc += fmt.Sprintf("Ordo catalog tool %s (risk %s). Calls pass Ordo's policy and are recorded as runs.", c.Tool, c.RiskLevel)
	tool := mcp.NewToolWithRawSchema(name, desc, inRaw)
	tool.Title = c.Tool
	var out struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(c.OutputSchema, &out) == nil && out.Type == "object" {
		tool.RawOutputSchema = c.OutputSchema
	}
	read, destructive := c.RiskLevel == contracts.RiskRead, c.RiskLevel == contracts.RiskDestructive
	tool.Annotations = mcp.ToolAnnotation{
		Title:           c.Tool,
		ReadOnlyHint:    mcp.ToBoolPtr(read),
		DestructiveHint: mcp.ToBoolPtr(destructive),
		IdempotentHint:  mcp.ToBoolPtr(c.Idempotent || read),
		// Ordo cannot know what a tool reaches, so it keeps MCP's default.
		OpenWorldHint: mcp.ToBoolPtr(true),
	}
	tool.Meta = mcp.NewMetaFromMap(map[string]any{"ordo/tool": c.Tool, "ordo/risk": string(c.RiskLevel)})
	if err := mcp.ValidateParamHeaderAnnotations(&tool); err != nil {
		return mcp.Tool{}, err
	}
	return tool, nil
}

// handler serves one published tool: its arguments are the payload.
func (g *gateway) handler(id string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := rawArguments(req)
		if err == nil {
			var res *mcp.CallToolResult
			if res, err = g.call(ctx, req, id, args); err == nil {
				return res, nil
			}
		}
		return errorResult(err), nil
	}
}

func (s *Server) handleCallTool(ctx context.Context, req mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	if len(a.Arguments) == 0 {
		a.Arguments = json.RawMessage(`{}`)
	}
	return s.gw.call(ctx, req, a.Tool, a.Arguments)
}

// call runs one gateway call: policy first, then the tool (or a
// confirmation), with an audit record of what happened. A tool the
// catalog lacks is refused without a record: nothing was attempted.
func (g *gateway) call(ctx context.Context, req mcp.CallToolRequest, id string, args json.RawMessage) (*mcp.CallToolResult, error) {
	t, ok := g.cfg.Tools.Lookup(id)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeUnknownTool, "no tool %q in the catalog", id).With("tool", id).With("field", "tool")
	}
	if st := req.Params.RequestState; st != "" {
		return g.confirmed(ctx, req, t, args, st)
	}
	scopes := g.scopes(ctx)
	d := policy.Decide(g.cfg.Policy, gatewayAction(t, nil), t.Contract, scopes)
	switch d.Decision {
	case contracts.PolicyDeny:
		run := g.record(ctx, t, args, d)
		err := contracts.Errorf(contracts.CodePolicyDenied, "policy denies %s: %s", t.Name(), d.Reason).
			With("tool", t.Name()).With("reason", d.Reason).With("run_id", run.ID)
		g.finish(ctx, run, nil, nil, err)
		return nil, err
	case contracts.PolicyRequireConfirm:
		if clientCaps(ctx).Elicitation != nil && req.Params.Task == nil {
			token := g.confirm.add(pendingConfirm{user: identityFrom(ctx).User, tool: t.Name(), digest: argsDigest(args), decision: d})
			return server.NewInputRequestBuilder(stateConfirm+token).Elicit(inputAnswer, confirmForm(t, args, d)).ToolResult(), nil
		}
		return g.viaApproval(ctx, t, args, scopes)
	}
	return g.invoke(ctx, t, args, d, nil)
}

// confirmed handles the answer to an inline confirmation: the retry must
// name the same caller, tool and arguments the question was about.
func (g *gateway) confirmed(ctx context.Context, req mcp.CallToolRequest, t *contracts.Tool, args json.RawMessage, state string) (*mcp.CallToolResult, error) {
	who := identityFrom(ctx).User
	token, ok := strings.CutPrefix(state, stateConfirm)
	var p pendingConfirm
	if ok {
		p, ok = g.confirm.take(token, who)
	}
	if !ok || p.tool != t.Name() || p.digest != argsDigest(args) {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "the confirmation this answers is unknown, expired or for another call").
			With("field", "requestState").With("tool", t.Name())
	}
	answer := server.ElicitationResponse(req.Params.InputResponses, inputAnswer)
	form := map[string]any{}
	if answer != nil {
		form, _ = answer.Content.(map[string]any)
	}
	note, _ := form["note"].(string)
	dec := contracts.DecisionRecord{
		Interrupt: contracts.Interrupt{Kind: contracts.InterruptStepApproval, Message: "confirm " + t.Name() + ": " + p.decision.Reason,
			PlanVersion: 1, ActionID: gatewayActionID, Tool: t.Name(), Payload: redactedPayload(t, args), CreatedAt: p.asked},
		Decision: contracts.Decision{Kind: contracts.DecisionReject, By: who, Note: note},
		At:       time.Now().UTC(),
	}
	if answer != nil && answer.Action == mcp.ElicitationResponseActionAccept && form["decision"] == string(contracts.DecisionApprove) {
		dec.Decision.Kind = contracts.DecisionApprove
		return g.invoke(ctx, t, args, p.decision, &dec)
	}
	why := "rejected"
	if answer == nil || answer.Action != mcp.ElicitationResponseActionAccept {
		why = "not answered"
		if answer != nil {
			why = string(answer.Action)
		}
	}
	run := g.record(ctx, t, args, p.decision)
	run.Decisions = []contracts.DecisionRecord{dec}
	err := contracts.Errorf(contracts.CodeRejected, "%s was not run: the confirmation was %s", t.Name(), why).
		With("tool", t.Name()).With("run_id", run.ID)
	g.finish(ctx, run, nil, nil, err)
	return nil, err
}

// invoke calls the tool. Its record is saved before the call, so no call
// happens unrecorded (a store failure refuses the call), and again with
// the outcome.
func (g *gateway) invoke(ctx context.Context, t *contracts.Tool, args json.RawMessage, d contracts.PolicyDecision, dec *contracts.DecisionRecord) (*mcp.CallToolResult, error) {
	run := g.record(ctx, t, args, d)
	if dec != nil {
		run.Decisions = []contracts.DecisionRecord{*dec}
	}
	run.Status, run.Seq = contracts.RunRunning, 1
	if err := g.cfg.Audit.Save(context.WithoutCancel(ctx), run); err != nil {
		return nil, contracts.Errorf(contracts.CodeStore, "gateway: %s not called, its audit record could not be saved: %w", t.Name(), err).With("tool", t.Name())
	}
	step := contracts.StepRecord{ActionID: gatewayActionID, Tool: t.Name(), PlanVersion: 1, Attempt: 1,
		IdempotencyKey: "gateway/" + run.ID, Payload: redactedPayload(t, args), StartedAt: time.Now().UTC()}
	out, err := g.cfg.Tools.Call(ctx, t.Name(), args, step.IdempotencyKey)
	if err != nil {
		g.finish(ctx, run, &step, nil, err)
		return nil, contracts.AsError(err).With("run_id", run.ID)
	}
	g.finish(ctx, run, &step, out, nil)
	return toolResult(out)
}

// record starts the audit record of one call: a one-action run of the
// caller, whose plan holds the redacted payload and whose policy is d.
func (g *gateway) record(ctx context.Context, t *contracts.Tool, args json.RawMessage, d contracts.PolicyDecision) *contracts.Run {
	now := time.Now().UTC()
	var inputs map[string]any
	_ = json.Unmarshal(redactedPayload(t, args), &inputs)
	p := gatewayPlan(t, inputs)
	return &contracts.Run{
		FormatVersion: contracts.RunFormatVersion, ID: "run_" + newToken()[:24], UserID: identityFrom(ctx).User,
		Goal: p.Goal, CreatedAt: now, UpdatedAt: now, Options: contracts.RunOptions{Timezone: p.Timezone},
		Plans:  []contracts.PlanRevision{{Version: 1, Source: "gateway", Plan: *p, CreatedAt: now}},
		Policy: map[string]contracts.PolicyDecision{gatewayActionID: d},
	}
}

// finish saves run with its outcome (a step, when the tool was called)
// and logs it; a failed save is logged, since the call already happened.
func (g *gateway) finish(ctx context.Context, run *contracts.Run, step *contracts.StepRecord, out json.RawMessage, callErr error) {
	now := time.Now().UTC()
	run.Seq++
	run.UpdatedAt = now
	switch code := contracts.CodeOf(callErr); {
	case callErr == nil:
		run.Status = contracts.RunCompleted
	case code == contracts.CodeRejected:
		run.Status = contracts.RunRejected
		run.Error = contracts.AsError(callErr)
	default:
		run.Status = contracts.RunFailed
		run.Error = contracts.AsError(callErr)
	}
	if step != nil {
		step.EndedAt = now
		step.Status, step.Result = contracts.StepSucceeded, out
		if callErr != nil {
			step.Status, step.Error = contracts.StepFailed, contracts.AsError(callErr)
		}
		run.Steps = append(run.Steps, *step)
	}
	if err := g.cfg.Audit.Save(context.WithoutCancel(ctx), run); err != nil {
		g.s.log.Error("gateway audit record not saved", "run_id", run.ID, "tool", run.Plans[0].Plan.Actions[0].Tool, "err", err)
	}
	g.s.log.Info("gateway call", "user", run.UserID, "tool", run.Plans[0].Plan.Actions[0].Tool, "status", run.Status,
		"code", int(contracts.CodeOf(callErr)), "run_id", run.ID)
}

// viaApproval hands a call that needs confirmation, from a client that
// cannot be asked inline, to the engine as a one-action run: policy stops
// it at step approval, and the caller answers with the approve tool.
func (g *gateway) viaApproval(ctx context.Context, t *contracts.Tool, args json.RawMessage, scopes []string) (*mcp.CallToolResult, error) {
	var inputs map[string]any
	if err := json.Unmarshal(args, &inputs); err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "arguments of %s: want a JSON object: %w", t.Name(), err).With("field", "arguments")
	}
	eng := g.s.opts.Engine
	run, err := eng.Plan(ctx, Request{Plan: gatewayPlan(t, inputs), UserID: identityFrom(ctx).User,
		Options: contracts.RunOptions{HITL: &contracts.HITLSwitches{}, Scopes: scopes}})
	if err == nil && run.Status == contracts.RunReady {
		run, err = eng.Execute(ctx, run.ID)
	}
	if err != nil {
		return nil, err
	}
	switch run.Status {
	case contracts.RunInterrupted:
		return nil, contracts.Errorf(contracts.CodeApprovalRequired,
			"%s needs a person's confirmation (%s) and this client cannot be asked inline: run %s waits; call approve with {\"run_id\": %q, \"decision\": \"approve\"} (or \"reject\"), then run_status shows the result",
			t.Name(), run.Policy[gatewayActionID].Reason, run.ID, run.ID).
			With("run_id", run.ID).With("tool", t.Name()).With("decisions", decisionsFor(contracts.InterruptStepApproval))
	case contracts.RunCompleted:
		for i := len(run.Steps) - 1; i >= 0; i-- {
			if st := run.Steps[i]; st.Status == contracts.StepSucceeded {
				return toolResult(st.Result)
			}
		}
	}
	return runResult(run, execView, "")
}

// scopes are the caller's granted scopes, per Gateway.Scopes.
func (g *gateway) scopes(ctx context.Context) []string {
	if g.cfg.Scopes == nil {
		return nil
	}
	return g.cfg.Scopes(identityFrom(ctx).User)
}

// gatewayActionID is the action id of every gateway run.
const gatewayActionID = "a1"

// gatewayAction is the one action a gateway call is.
func gatewayAction(t *contracts.Tool, inputs map[string]any) contracts.Action {
	intent := "write"
	if t.Contract.RiskLevel == contracts.RiskRead {
		intent = "read"
	}
	return contracts.Action{ID: gatewayActionID, Tool: t.Name(), Intent: intent, Requires: []string{}, Produces: []string{}, Inputs: inputs}
}

func gatewayPlan(t *contracts.Tool, inputs map[string]any) *contracts.Plan {
	return &contracts.Plan{Version: contracts.PlanVersion, Goal: gatewayGoal + t.Name(), Timezone: "UTC",
		Actions: []contracts.Action{gatewayAction(t, inputs)}}
}

// redactedPayload hides the contract's secret fields; a payload that
// cannot be read is hidden whole.
func redactedPayload(t *contracts.Tool, args json.RawMessage) json.RawMessage {
	switch r := contracts.Redact(args, t.Contract.SecretFields).(type) {
	case json.RawMessage:
		return r
	default:
		b, _ := json.Marshal(r)
		return b
	}
}

// toolResult renders a tool's result: an object as structured content,
// anything else as {"result": value}; the JSON text goes along.
func toolResult(out json.RawMessage) (*mcp.CallToolResult, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(out, &obj) == nil && obj != nil {
		return okResult(out)
	}
	return okResult(map[string]json.RawMessage{"result": out})
}

// confirmForm asks a person whether a call policy flagged may run.
func confirmForm(t *contracts.Tool, args json.RawMessage, d contracts.PolicyDecision) mcp.ElicitationParams {
	msg := fmt.Sprintf("Ordo: a client asks to call %s (risk %s).\nPolicy asks for confirmation: %s\nArguments: %s",
		t.Name(), t.Contract.RiskLevel, d.Reason, redactedPayload(t, args))
	return mcp.ElicitationParams{
		Message: msg,
		RequestedSchema: map[string]any{"type": "object", "required": []string{"decision"}, "properties": map[string]any{
			"decision": map[string]any{"type": "string", "title": "Decision", "enum": []string{"approve", "reject"}},
			"note":     map[string]any{"type": "string", "title": "Note (optional)"},
		}},
	}
}

// argsDigest identifies arguments independently of key order and spacing.
func argsDigest(args json.RawMessage) string {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return ""
	}
	canon, _ := json.Marshal(v)
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// pendingConfirm is a confirmation asked and not yet answered.
type pendingConfirm struct {
	user, tool, digest string
	decision           contracts.PolicyDecision
	runArgs            json.RawMessage // admin tools: the arguments to run with once confirmed (confirm.go)
	asked              time.Time
	seq                uint64 // order of asking
}

// maxPendingConfirms bounds the confirmations waiting for an answer.
const maxPendingConfirms = 1024

// confirmations holds pending confirmations by token until answered or
// expired, so an answer cannot be replayed or moved to other arguments.
type confirmations struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]pendingConfirm
	seq uint64
}

func newConfirmations(ttl time.Duration) *confirmations {
	return &confirmations{ttl: ttl, m: map[string]pendingConfirm{}}
}

func (c *confirmations) add(p pendingConfirm) string {
	p.asked = time.Now().UTC()
	token := newToken()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	p.seq = c.seq
	oldest := ""
	for k, old := range c.m {
		if p.asked.Sub(old.asked) > c.ttl {
			delete(c.m, k)
		} else if oldest == "" || old.seq < c.m[oldest].seq {
			oldest = k
		}
	}
	if len(c.m) >= maxPendingConfirms {
		delete(c.m, oldest) // a flood of unanswered questions evicts the oldest
	}
	c.m[token] = p
	return token
}

// take removes and returns the confirmation for token, only for its user
// and only while it has not expired.
func (c *confirmations) take(token, user string) (pendingConfirm, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[token]
	if !ok || p.user != user {
		return pendingConfirm{}, false
	}
	delete(c.m, token)
	return p, time.Since(p.asked) <= c.ttl
}
