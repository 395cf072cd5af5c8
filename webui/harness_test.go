package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/syncbuf"
	"github.com/ordo-run/ordo/internal/testhost"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/patterns"
	"github.com/ordo-run/ordo/plugins/sdk"
	"github.com/ordo-run/ordo/webui"
)

// Tokens of the test users: ada is an admin, bob and cat are users.
const (
	adaToken = "ada-admin-token-0123456789"
	bobToken = "bob-user-token-0123456789"
	catToken = "cat-user-token-0123456789"
)

// stack is a real Ordo stack behind the console: a host with in-process
// tools, the engine over an in-memory store with plan approval on and an
// in-memory pattern memory (saved templates), a recommender, the MCP
// server holding the tokens, and the console on an httptest server
// (mounted beside the MCP handler, as ordo serve does).
type stack struct {
	host     *host.Host
	store    *memory.MemStore
	patterns *patterns.Memory // saved templates
	engine   *agent.Engine
	ts       *httptest.Server
	gates    gates
	log      syncbuf.Buffer // the host's, the server's and the console's log lines
}

// gates hold test.hold calls until the test opens them, by name.
type gates struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (g *gates) get(name string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]chan struct{}{}
	}
	if g.m[name] == nil {
		g.m[name] = make(chan struct{})
	}
	return g.m[name]
}

// open lets every test.hold call of gate name go on.
func (g *gates) open(name string) { close(g.get(name)) }

func newStack(t *testing.T) *stack { return newStackWith(t, agent.DefaultConfig(), nil) }

// newStackWith is newStack with the engine configured by cfg and planning
// with model (none when nil).
func newStackWith(t *testing.T, cfg agent.Config, model llm.LLM) *stack {
	t.Helper()
	s := &stack{store: memory.NewMemStore()}
	log := slog.New(slog.NewTextHandler(&s.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := testhost.Start(t, host.WithLogger(log))
	rec := testhost.Serve(t, h, echoTool(), holdTool(&s.gates), loginTool(), failTool())
	var err error
	if s.patterns, err = patterns.Open("", nil, patterns.Options{}); err != nil {
		t.Fatal(err)
	}
	s.host = h
	s.engine = agent.New(cfg, agent.Deps{Tools: h, Store: s.store, Memory: s.patterns, Recommender: rec, LLM: model})
	srv, err := mcpserver.New(mcpserver.Options{Engine: s.engine, Runs: s.store, Catalog: h, Admin: h, Logger: log,
		Tokens: []mcpserver.Token{
			{Token: adaToken, Identity: mcpserver.Identity{User: "ada", Roles: []string{mcpserver.RoleAdmin}}},
			{Token: bobToken, Identity: mcpserver.Identity{User: "bob"}},
			{Token: catToken, Identity: mcpserver.Identity{User: "cat"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	ui, err := webui.New(webui.Options{MCP: srv, Engine: s.engine, Runs: s.store, Catalog: h, Admin: h, Templates: s.engine,
		Config: []byte("http:\n  tokens:\n    - name: ada\n      token: HIDDEN\n"), Version: "test", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", srv.Handler())
	mux.Handle(webui.Prefix, ui)
	s.ts = httptest.NewServer(mux)
	t.Cleanup(s.ts.Close)
	t.Cleanup(srv.EndStreams)
	return s
}

// echoTool echoes its text: a tool result carrying whatever the plan put
// in, markup included.
func echoTool() sdk.Tool {
	return sdk.Tool{Contract: contracts.Contract{
		Tool: "test.echo", Service: "test", Description: "Echo a text back", RiskLevel: contracts.RiskRead,
		InputSchema:  json.RawMessage(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["echo"],"properties":{"echo":{"type":"string"}}}`),
		ProducesMap:  map[string]string{"echo": "$.echo"},
	}, Handler: func(_ context.Context, c sdk.Call) (any, error) {
		return map[string]any{"echo": c.Payload["text"].(string)}, nil
	}}
}

// loginTool takes a password, a secret field its step records redact.
func loginTool() sdk.Tool {
	return sdk.Tool{Contract: contracts.Contract{
		Tool: "test.login", Service: "test", Description: "Log in", RiskLevel: contracts.RiskRead, SecretFields: []string{"password"},
		InputSchema:  json.RawMessage(`{"type":"object","required":["user","password"],"properties":{"user":{"type":"string"},"password":{"type":"string"}},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`),
	}, Handler: func(context.Context, sdk.Call) (any, error) { return map[string]any{"ok": true}, nil }}
}

// holdTool waits until the test opens the gate its payload names: a step
// still in flight while the test pauses or cancels its run.
func holdTool(g *gates) sdk.Tool {
	return sdk.Tool{Contract: contracts.Contract{
		Tool: "test.hold", Service: "test", Description: "Wait for a gate to open", RiskLevel: contracts.RiskRead,
		InputSchema:  json.RawMessage(`{"type":"object","required":["gate"],"properties":{"gate":{"type":"string"}},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`),
	}, Handler: func(ctx context.Context, c sdk.Call) (any, error) {
		select {
		case <-g.get(c.Payload["gate"].(string)):
			return map[string]any{}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
}

// failTool always fails, as a tool error that no retry mends.
func failTool() sdk.Tool {
	return sdk.Tool{Contract: contracts.Contract{
		Tool: "test.fail", Service: "test", Description: "Fail every time", RiskLevel: contracts.RiskRead,
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`),
	}, Handler: func(context.Context, sdk.Call) (any, error) {
		return nil, contracts.Errorf(contracts.CodeToolFailed, "test.fail failed as it always does")
	}}
}

// echoPlan is a plan of n echo actions of text, each after the one
// before it.
func echoPlan(goal, text string, n int) string {
	var actions []map[string]any
	for i := 1; i <= n; i++ {
		a := map[string]any{"id": "a" + strconv.Itoa(i), "tool": "test.echo", "intent": "transform",
			"requires": []string{}, "produces": []string{}, "inputs": map[string]any{"text": text}}
		if i > 1 {
			a["depends_on"] = []string{"a" + strconv.Itoa(i-1)}
		}
		actions = append(actions, a)
	}
	data, _ := json.Marshal(map[string]any{"version": "1.0", "goal": goal, "timezone": "UTC", "actions": actions,
		"constraints": map[string]any{"max_actions": max(n, 1)}})
	return string(data)
}

// browser is a person's cookie-keeping client, signed in or not.
type browser struct {
	t    *testing.T
	s    *stack
	c    *http.Client
	csrf string
	seq  string // the interrupt the last run page's decision forms answer (the run's seq)
}

func (s *stack) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, s: s, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

var (
	csrfRe = regexp.MustCompile(`name="csrf" content="([0-9a-f]*)"`)
	seqRe  = regexp.MustCompile(`name="seq" value="([0-9]*)"`)
)

// get fetches a page and remembers its CSRF token.
func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	res, err := b.c.Get(b.s.ts.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if m := csrfRe.FindSubmatch(body); m != nil && len(m[1]) > 0 {
		b.csrf = string(m[1])
	}
	if m := seqRe.FindSubmatch(body); m != nil {
		b.seq = string(m[1])
	}
	return res, string(body)
}

// post submits a form with the page's CSRF token (unless the form sets
// its own csrf) and, to a run's decide, the interrupt the page showed, as
// the page's forms do.
func (b *browser) post(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	if !form.Has("csrf") {
		form.Set("csrf", b.csrf)
	}
	if strings.HasSuffix(path, "/decide") && !form.Has("seq") {
		form.Set("seq", b.seq)
	}
	res, err := b.c.PostForm(b.s.ts.URL+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// signIn signs in with token and fails the test if that does not work.
func (b *browser) signIn(token string) *browser {
	b.t.Helper()
	b.get("/ui/signin")
	res, body := b.post("/ui/signin", url.Values{"token": {token}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/runs" {
		b.t.Fatalf("sign in: %s\n%s", res.Status, body)
	}
	b.get("/ui/runs")
	return b
}

// startPlan starts a run of plan from the new-run form and returns its id.
func (b *browser) startPlan(plan string) string {
	b.t.Helper()
	return b.start(url.Values{"plan": {plan}})
}

// start submits the new-run form and returns the new run's id.
func (b *browser) start(form url.Values) string {
	b.t.Helper()
	b.get("/ui/runs/new")
	res, body := b.post("/ui/runs", form)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/runs/run_") {
		b.t.Fatalf("start run: %s %s\n%s", res.Status, loc, body)
	}
	return strings.TrimPrefix(loc, "/ui/runs/")
}

// approve waits until run id waits for plan approval and approves it
// from its page.
func (b *browser) approve(id string) {
	b.t.Helper()
	b.s.waitStatus(b.t, id, contracts.RunInterrupted)
	b.get("/ui/runs/" + id)
	if res, body := b.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"approve"}}); res.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("approve %s: %s\n%s", id, res.Status, body)
	}
}

// waitStatus waits until the run reaches status.
func (s *stack) waitStatus(t *testing.T, id string, want contracts.RunStatus) *contracts.Run {
	t.Helper()
	var run *contracts.Run
	testwait.For(t, 20*time.Second, func() error {
		var err error
		run, err = s.engine.Get(context.Background(), id)
		if err == nil && run.Status == want {
			return nil
		}
		if err == nil && run.Status.Final() {
			t.Fatalf("run %s: %v %+v, want %s", id, run.Status, run.Error, want)
		}
		if err != nil {
			return fmt.Errorf("run %s: %v, want %s", id, err, want)
		}
		return fmt.Errorf("run %s: %v %+v, want %s", id, run.Status, run.Error, want)
	})
	return run
}
