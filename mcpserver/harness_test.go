package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testhost"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/plugins/sdk"
	"github.com/ordo-run/ordo/recommender"
)

// Tokens the HTTP tests use.
const (
	adminToken = "admin-secret-token"
	userToken  = "user-secret-token"
)

// env is a real Ordo stack: a host with in-process tools, the engine over
// an in-memory store, a recommender over the catalog, and the MCP server.
type env struct {
	host   *host.Host
	store  *memory.MemStore
	engine *agent.Engine
	srv    *mcpserver.Server
	gate   chan struct{} // test.wait blocks until this closes or its call ends
	cfg    agent.Config

	mu      sync.Mutex
	deleted []string
}

type envOpt func(*envConfig)

type envConfig struct {
	cfg      agent.Config
	sampling bool          // plan through the client's model
	sampleIn time.Duration // Options.SamplingTimeout
	host     []host.Option // e.g. upstreams, mounted before the tools are indexed
	maxTasks int           // Options.MaxTasksPerUser
	log      *slog.Logger  // the server's and the host's log
}

func withConfig(c agent.Config) envOpt { return func(e *envConfig) { e.cfg = c } }
func withSampling() envOpt             { return func(e *envConfig) { e.sampling = true } }
func withSamplingTimeout(d time.Duration) envOpt {
	return func(e *envConfig) { e.sampling, e.sampleIn = true, d }
}
func withMaxTasks(n int) envOpt { return func(e *envConfig) { e.maxTasks = n } }

// withLog sends the server's and the host's log lines to w, as text.
func withLog(w io.Writer) envOpt {
	return func(e *envConfig) {
		e.log = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
		e.host = append(e.host, host.WithLogger(e.log))
	}
}
func withHost(opts ...host.Option) envOpt {
	return func(e *envConfig) { e.host = append(e.host, opts...) }
}

func newEnv(t *testing.T, opts ...envOpt) *env {
	t.Helper()
	ec := envConfig{cfg: agent.DefaultConfig()}
	for _, o := range opts {
		o(&ec)
	}
	e, h, rec := newStack(t, ec.cfg, ec.host)
	e.engine = agent.New(ec.cfg, agent.Deps{Tools: h, Store: e.store, Recommender: rec})
	o := mcpserver.Options{
		Engine: e.engine, Runs: e.store, Catalog: h, Admin: h, Version: "test", MaxTasksPerUser: ec.maxTasks, Logger: ec.log,
		// The operator turned the admin tools on for stdio (mcp.stdio_admin).
		StdioIdentity: &mcpserver.Identity{User: "local", Roles: []string{mcpserver.RoleAdmin}},
		Tokens: []mcpserver.Token{
			{Token: adminToken, Identity: mcpserver.Identity{User: "ada", Roles: []string{mcpserver.RoleAdmin}}},
			{Token: userToken, Identity: mcpserver.Identity{User: "bob"}},
		},
	}
	if ec.sampling {
		o.SamplingTimeout = ec.sampleIn
		o.Sampling = func(m llm.LLM) llm.LLM { return m }
	}
	var err error
	if e.srv, err = mcpserver.New(o); err != nil {
		t.Fatal(err)
	}
	return e
}

// newStack starts a host with hostOpts and the harness's in-process tools
// (plus extra), and a recommender indexing the host's whole catalog.
func newStack(t *testing.T, cfg agent.Config, hostOpts []host.Option, extra ...sdk.Tool) (*env, *host.Host, *recommender.Recommender) {
	t.Helper()
	h := testhost.Start(t, hostOpts...)
	e := &env{host: h, store: memory.NewMemStore(), gate: make(chan struct{}), cfg: cfg}
	return e, h, testhost.Serve(t, h, append(e.tools(), extra...)...)
}

// closeGate makes test.wait block until the returned func opens it.
func (e *env) closeGate() (open func()) {
	g := make(chan struct{})
	e.mu.Lock()
	e.gate = g
	e.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(g) }) }
}

func (e *env) currentGate() chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gate
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// tools are the in-process tools the plans call.
func (e *env) tools() []sdk.Tool {
	return []sdk.Tool{
		{Contract: contracts.Contract{
			Tool: "text.upper", Service: "text", Description: "Uppercase a text", RiskLevel: contracts.RiskRead,
			InputSchema:  schema(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}},"additionalProperties":false}`),
			OutputSchema: schema(`{"type":"object","required":["upper"],"properties":{"upper":{"type":"string"}}}`),
			ProducesMap:  map[string]string{"upper": "$.upper"},
		}, Handler: func(_ context.Context, c sdk.Call) (any, error) {
			return map[string]any{"upper": strings.ToUpper(c.Payload["text"].(string))}, nil
		}},
		{Contract: contracts.Contract{
			Tool: "notes.delete", Service: "notes", Description: "Delete a note by id", RiskLevel: contracts.RiskDestructive,
			Tags:         []string{contracts.TagDelete},
			InputSchema:  schema(`{"type":"object","required":["id"],"properties":{"id":{"type":"string"}},"additionalProperties":false}`),
			OutputSchema: schema(`{"type":"object","required":["deleted"],"properties":{"deleted":{"type":"string"}}}`),
			ProducesMap:  map[string]string{"deleted_id": "$.deleted"},
		}, Handler: func(_ context.Context, c sdk.Call) (any, error) {
			id := c.Payload["id"].(string)
			e.mu.Lock()
			e.deleted = append(e.deleted, id)
			e.mu.Unlock()
			return map[string]any{"deleted": id}, nil
		}},
		{Contract: contracts.Contract{
			Tool: "test.wait", Service: "test", Description: "Wait until released", RiskLevel: contracts.RiskRead, TimeoutMS: 60000,
			InputSchema:  schema(`{"type":"object","properties":{"label":{"type":"string"}},"additionalProperties":false}`),
			OutputSchema: schema(`{"type":"object","required":["waited"],"properties":{"waited":{"type":"string"}}}`),
			ProducesMap:  map[string]string{"waited": "$.waited"},
		}, Handler: func(ctx context.Context, c sdk.Call) (any, error) {
			select {
			case <-e.currentGate():
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			label, _ := c.Payload["label"].(string)
			return map[string]any{"waited": label}, nil
		}},
	}
}

// upperPlan is a one-step plan uppercasing text.
func upperPlan(text string) map[string]any {
	return map[string]any{
		"version": "1.0", "goal": "shout " + text, "timezone": "UTC",
		"actions": []any{map[string]any{
			"id": "a1", "tool": "text.upper", "intent": "transform",
			"requires": []any{}, "produces": []any{"upper"}, "inputs": map[string]any{"text": text},
		}},
	}
}

// deletePlan uppercases then deletes a note: the delete needs step approval.
func deletePlan(id string) map[string]any {
	return map[string]any{
		"version": "1.0", "goal": "delete note " + id, "timezone": "UTC",
		"actions": []any{
			map[string]any{"id": "a1", "tool": "text.upper", "intent": "transform", "requires": []any{}, "produces": []any{"upper"}, "inputs": map[string]any{"text": id}},
			map[string]any{"id": "a2", "tool": "notes.delete", "intent": "write", "requires": []any{"upper"}, "produces": []any{"deleted_id"},
				"input_bindings": map[string]any{"id": "upper"}},
		},
	}
}

// --- clients ---

type clientOpts struct {
	opts    []client.ClientOption
	legacy  bool
	onNotif func(mcp.JSONRPCNotification)
}

// stdioClient serves e over an in-memory pipe pair and connects a client.
func (e *env) stdioClient(t *testing.T, co clientOpts) *client.Client {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.srv.ServeStdio(ctx, serverIn, serverOut) }()
	c := client.NewClient(transport.NewIO(clientIn, clientOut, io.NopCloser(strings.NewReader(""))), co.all()...)
	t.Cleanup(func() {
		_ = c.Close()
		cancel()
		_ = serverIn.Close()
		_ = clientIn.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("stdio server did not stop")
		}
	})
	start(t, c, co)
	return c
}

// httpServer serves e's handler on a loopback httptest server.
func (e *env) httpServer(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(e.srv.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func httpClient(t *testing.T, url, token string, co clientOpts) *client.Client {
	t.Helper()
	topts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token})}
	if co.legacy {
		// mcp-go's legacy HTTP client hears server-initiated sampling only
		// on the listening GET stream; this client tests the old protocol
		// on purpose.
		//lint:ignore SA1019 legacy clients are still served and tested
		topts = append(topts, transport.WithContinuousListening())
	}
	tr, err := transport.NewStreamableHTTP(url+"/mcp", topts...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, co.all()...)
	t.Cleanup(func() { _ = c.Close() })
	start(t, c, co)
	return c
}

func (co clientOpts) all() []client.ClientOption {
	opts := co.opts
	if co.legacy {
		opts = append(opts, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	return opts
}

func start(t *testing.T, c *client.Client, co clientOpts) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// The transport serves the server's requests with Start's context, so
	// it must outlive this function.
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if co.onNotif != nil {
		c.OnNotification(co.onNotif)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "ordo-test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatal(err)
	}
}

// call calls a tool and returns its structured content as a map; a tool
// error fails the test unless wantErr.
func call(t *testing.T, c *client.Client, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := callRaw(c, name, args, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error: %s", name, testmcp.Text(res))
	}
	return structured(t, res)
}

func callRaw(c *client.Client, name string, args map[string]any, meta *mcp.Meta) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args, Meta: meta}})
}

// toolError calls a tool that must fail and returns its error's code and
// the error object its text holds.
func toolError(t *testing.T, c *client.Client, name string, args map[string]any) (contracts.Code, map[string]any) {
	t.Helper()
	res, err := callRaw(c, name, args, nil)
	if err != nil {
		t.Fatalf("%s: protocol error %v, want a tool error", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s: succeeded, want a tool error: %s", name, testmcp.Text(res))
	}
	if res.StructuredContent != nil || len(res.RawStructuredContent) > 0 {
		t.Fatalf("%s: a tool error must not carry structured content (it would break the output schema)", name)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(testmcp.Text(res)), &body); err != nil {
		t.Fatalf("%s: tool error text is not the error object: %q", name, testmcp.Text(res))
	}
	code, _ := body["code"].(float64)
	return contracts.Code(code), body
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	var raw []byte
	if len(res.RawStructuredContent) > 0 {
		raw = res.RawStructuredContent
	} else {
		var err error
		if raw, err = json.Marshal(res.StructuredContent); err != nil {
			t.Fatal(err)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		t.Fatalf("structured content is not an object: %s (%v)", raw, err)
	}
	return m
}

// --- client-side handlers ---

// elicitor answers elicitations with a scripted form and records them.
type elicitor struct {
	mu     sync.Mutex
	seen   []mcp.ElicitationParams
	answer func(p mcp.ElicitationParams) *mcp.ElicitationResult
}

func (h *elicitor) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	h.mu.Lock()
	h.seen = append(h.seen, req.Params)
	h.mu.Unlock()
	return h.answer(req.Params), nil
}

func (h *elicitor) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seen)
}

func accept(content map[string]any) *mcp.ElicitationResult {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}
}

// sampler answers sampling requests by role (the planner gets a plan, the
// composer a sentence) and records them.
type sampler struct {
	mu    sync.Mutex
	seen  []mcp.CreateMessageParams
	plans []map[string]any
}

func (h *sampler) CreateMessage(_ context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, req.CreateMessageParams)
	role := ""
	if md, ok := req.Metadata.(map[string]any); ok {
		role, _ = md["ordo_role"].(string)
	}
	var answer string
	switch role {
	case "planner":
		if len(h.plans) == 0 {
			return nil, errors.New("no scripted plan left")
		}
		data, _ := json.Marshal(h.plans[0])
		h.plans = h.plans[1:]
		answer = "Here is the plan:\n```json\n" + string(data) + "\n```"
	case "composer":
		answer = "Done: the text was shouted."
	default:
		return nil, fmt.Errorf("unexpected sampling role %q", role)
	}
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent(answer)},
		Model:           "scripted", StopReason: "endTurn",
	}, nil
}

func (h *sampler) roles() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, p := range h.seen {
		if md, ok := p.Metadata.(map[string]any); ok {
			r, _ := md["ordo_role"].(string)
			out = append(out, r)
		}
	}
	return out
}
