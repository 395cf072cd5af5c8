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

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/policy"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
)

// Gateway makes Ordo a policy-gated tool gateway (config expose_tools):
// every catalog tool is published as an MCP tool of Ordo, and call_tool
// calls any of them by catalog id. Each call is a one-action run of the
// engine (Engine.Call): the same policy, validation, redaction and run
// record as a plan step, so run_status and list_runs show it.
type Gateway struct {
	// Tools is the live catalog; *host.Host satisfies it.
	Tools GatewayTools
	// Scopes, when set, gives a caller's granted scopes (as the engine's
	// runs get them, any granted to everyone included): calls are checked
	// against them, and a tool whose scopes the caller lacks is not
	// listed to them. Without it only the engine's GrantedScopes count.
	Scopes func(user string) []string
	// ConfirmTTL bounds how long an inline confirmation may take
	// (default 10 minutes).
	ConfirmTTL time.Duration
}

// GatewayTools is what the gateway needs of the catalog to publish it.
type GatewayTools interface {
	Lookup(name string) (*contracts.Tool, bool)
	List() []*contracts.Tool
	Subscribe(ctx context.Context) <-chan host.CatalogEvent
}

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
	name string
	hash string // of the contract it was published from (CatalogEvent.Hash)
}

func (s *Server) newGateway() (*gateway, error) {
	cfg := s.opts.Gateway
	switch {
	case cfg.Tools == nil:
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "mcpserver: the gateway needs the tool catalog").With("field", "gateway.tools")
	case s.opts.Engine == nil:
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "mcpserver: the gateway needs the engine").With("field", "engine")
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
		now = append(now, host.CatalogEvent{Kind: host.Added, Tool: t.Name(), Contract: t.Contract, Hash: t.Hash()})
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

// apply publishes added and changed tools and withdraws removed ones,
// through Server.publish, in one change per burst.
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
		if had && old.hash == ev.Hash {
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
		g.byID[id] = published{name: name, hash: ev.Hash}
		g.byName[name] = id
		adds = append(adds, server.ServerTool{Tool: tool, Handler: g.handler(id)})
	}
	g.mu.Unlock()
	g.s.publish(adds, dels)
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

// call runs one gateway call through the engine (agent.Engine.Call), the
// only writer of runs and caller of policy: the call is a one-action run
// like any plan step. A call policy wants confirmed stops at step
// approval: the person is asked inline when the client can elicit,
// otherwise the run waits for the approve tool.
func (g *gateway) call(ctx context.Context, req mcp.CallToolRequest, id string, args json.RawMessage) (*mcp.CallToolResult, error) {
	t, ok := g.cfg.Tools.Lookup(id)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeUnknownTool, "no tool %q in the catalog", id).With("tool", id).With("field", "tool")
	}
	if st := req.Params.RequestState; st != "" {
		return g.confirmed(ctx, req, t, args, st)
	}
	run, err := g.s.opts.Engine.Call(ctx, agent.CallRequest{Tool: t.Name(), Args: args, UserID: identityFrom(ctx).User, Scopes: g.scopes(ctx)})
	if err != nil {
		return nil, err
	}
	if run.Status == contracts.RunInterrupted && clientCaps(ctx).Elicitation != nil && req.Params.Task == nil {
		token := g.confirm.add(pendingConfirm{user: identityFrom(ctx).User, tool: t.Name(), digest: argsDigest(args), runID: run.ID})
		form := confirmForm(t, args, run.Policy[agent.DirectAction].Reason)
		return server.NewInputRequestBuilder(stateConfirm+token).Elicit(inputAnswer, form).ToolResult(), nil
	}
	return g.outcome(t, run)
}

// confirmed handles the answer to an inline confirmation: the retry must
// name the same caller, tool and arguments the question was about; the
// answer resumes the waiting run.
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
	d := contracts.Decision{Kind: contracts.DecisionReject, By: who, Note: note}
	approved := answer != nil && answer.Action == mcp.ElicitationResponseActionAccept && form["decision"] == string(contracts.DecisionApprove)
	if approved {
		d.Kind = contracts.DecisionApprove
	}
	run, err := g.s.opts.Engine.Confirm(ctx, p.runID, d, args)
	if err != nil {
		return nil, err
	}
	if !approved {
		why := "rejected"
		if answer == nil || answer.Action != mcp.ElicitationResponseActionAccept {
			why = "not answered"
			if answer != nil {
				why = string(answer.Action)
			}
		}
		return nil, contracts.Errorf(contracts.CodeRejected, "%s was not run: the confirmation was %s", t.Name(), why).
			With("tool", t.Name()).With("run_id", run.ID)
	}
	return g.outcome(t, run)
}

// outcome is a direct call's run as the call's answer: the tool's result,
// the run's coded error, or how to approve a run that waits.
func (g *gateway) outcome(t *contracts.Tool, run *contracts.Run) (*mcp.CallToolResult, error) {
	g.s.log.Info("gateway call", "user", run.UserID, "tool", t.Name(), "status", run.Status, "run_id", run.ID)
	switch run.Status {
	case contracts.RunCompleted:
		if n := len(run.Steps); n > 0 && run.Steps[n-1].Status == contracts.StepSucceeded {
			return toolResult(run.Steps[n-1].Result)
		}
	case contracts.RunInterrupted:
		if in := run.Interrupt; in != nil && in.Kind == contracts.InterruptContractChanged { // since the person confirmed
			return nil, contracts.Errorf(contracts.CodeApprovalRequired, "%s: %s; run %s waits: call approve with {\"run_id\": %q, \"decision\": \"approve\"} (or \"reject\")",
				t.Name(), in.Message, run.ID, run.ID).With("run_id", run.ID).With("tool", t.Name()).With("decisions", decisionsFor(in.Kind)).With("changes", in.Changes)
		}
		return nil, contracts.Errorf(contracts.CodeApprovalRequired,
			"%s needs a person's confirmation (%s) and this client cannot be asked inline: run %s waits; call approve with {\"run_id\": %q, \"decision\": \"approve\"} (or \"reject\"), then run_status shows the result",
			t.Name(), run.Policy[agent.DirectAction].Reason, run.ID, run.ID).
			With("run_id", run.ID).With("tool", t.Name()).With("decisions", decisionsFor(contracts.InterruptStepApproval))
	case contracts.RunFailed:
		if run.Error != nil {
			return nil, contracts.Errorf(run.Error.Code, "%s", run.Error.Message).
				WithDetails(run.Error.Details).With("run_id", run.ID)
		}
	}
	return runResult(run, execView, "")
}

// visible reports whether the caller may see a catalog tool: with
// Gateway.Scopes, only one whose scopes they hold (policy would deny them
// the rest), so tools/list and search_tools show no tool they cannot call.
func (g *gateway) visible(ctx context.Context, c contracts.Contract) bool {
	return g.cfg.Scopes == nil || len(policy.MissingScopes(c.ScopesRequired, g.scopes(ctx), nil)) == 0
}

// visibleName is visible for a published tool name; one whose tool has
// just left the catalog is hidden until it is withdrawn.
func (g *gateway) visibleName(ctx context.Context, name string) bool {
	if g.cfg.Scopes == nil {
		return true
	}
	g.mu.Lock()
	id, ok := g.byName[name]
	g.mu.Unlock()
	if !ok {
		return true // not a catalog tool
	}
	t, found := g.cfg.Tools.Lookup(id)
	return found && g.visible(ctx, t.Contract)
}

// shows reports whether the caller may see a catalog tool (search_tools,
// ordo://catalog): every one without the gateway, else as visible says.
func (s *Server) shows(ctx context.Context, c contracts.Contract) bool {
	return s.gw == nil || s.gw.visible(ctx, c)
}

// scopes are the caller's granted scopes, per Gateway.Scopes.
func (g *gateway) scopes(ctx context.Context) []string {
	if g.cfg.Scopes == nil {
		return nil
	}
	return g.cfg.Scopes(identityFrom(ctx).User)
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
func confirmForm(t *contracts.Tool, args json.RawMessage, why string) mcp.ElicitationParams {
	msg := fmt.Sprintf("Ordo: a client asks to call %s (risk %s).\nPolicy asks for confirmation: %s\nArguments: %s",
		t.Name(), t.Contract.RiskLevel, why, redactedPayload(t, args))
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
	runID              string          // gateway: the run that waits for the answer
	runArgs            json.RawMessage // admin tools: the arguments to run with once confirmed (confirm.go)
	asked              time.Time
	seq                uint64 // order of asking
}

// maxPendingConfirms bounds the confirmations waiting for an answer, and
// maxPendingPerUser those of one user: a user's flood of unanswered
// questions evicts their own oldest, never another user's.
const (
	maxPendingConfirms = 1024
	maxPendingPerUser  = 64
)

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
	held := map[string]int{}      // pending confirmations by user
	oldest := map[string]string{} // each user's oldest token
	for k, old := range c.m {
		if p.asked.Sub(old.asked) > c.ttl {
			delete(c.m, k)
			continue
		}
		held[old.user]++
		if o, ok := oldest[old.user]; !ok || old.seq < c.m[o].seq {
			oldest[old.user] = k
		}
	}
	switch {
	case held[p.user] >= maxPendingPerUser:
		delete(c.m, oldest[p.user])
	case len(c.m) >= maxPendingConfirms: // many users: the one holding most gives way
		most := p.user
		for u, n := range held {
			if n > held[most] {
				most = u
			}
		}
		delete(c.m, oldest[most])
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
