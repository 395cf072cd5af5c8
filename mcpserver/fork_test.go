package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// chainTools are three in-process tools a three-step plan chains: fetch
// yields n, double yields d = 2n (and fails while broken), report yields
// a text. Every call is counted.
type chainTools struct {
	mu     sync.Mutex
	calls  map[string]int
	broken bool
}

func (c *chainTools) count(tool string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[tool]
}

func (c *chainTools) setBroken(b bool) {
	c.mu.Lock()
	c.broken = b
	c.mu.Unlock()
}

func (c *chainTools) called(tool string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[tool]++
	return c.broken
}

func (c *chainTools) tools() []sdk.Tool {
	obj := func(s string) json.RawMessage { return json.RawMessage(s) }
	return []sdk.Tool{
		{Contract: contracts.Contract{
			Tool: "chain.fetch", Service: "chain", Description: "Fetch a number", RiskLevel: contracts.RiskRead,
			InputSchema:  obj(`{"type":"object","properties":{},"additionalProperties":false}`),
			OutputSchema: obj(`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`),
			ProducesMap:  map[string]string{"n": "$.n"},
		}, Handler: func(context.Context, sdk.Call) (any, error) {
			c.called("chain.fetch")
			return map[string]any{"n": 21}, nil
		}},
		{Contract: contracts.Contract{
			Tool: "chain.double", Service: "chain", Description: "Double a number", RiskLevel: contracts.RiskRead,
			InputSchema:  obj(`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
			OutputSchema: obj(`{"type":"object","required":["d"],"properties":{"d":{"type":"integer"}}}`),
			ProducesMap:  map[string]string{"d": "$.d"},
		}, Handler: func(_ context.Context, call sdk.Call) (any, error) {
			if c.called("chain.double") {
				return nil, contracts.Errorf(contracts.CodeToolFailed, "the doubler is broken")
			}
			var in struct{ N int }
			if err := call.Decode(&in); err != nil {
				return nil, err
			}
			return map[string]any{"d": in.N * 2}, nil
		}},
		{Contract: contracts.Contract{
			Tool: "chain.report", Service: "chain", Description: "Report a number", RiskLevel: contracts.RiskRead,
			InputSchema:  obj(`{"type":"object","required":["d"],"properties":{"d":{"type":"integer"}},"additionalProperties":false}`),
			OutputSchema: obj(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`),
			ProducesMap:  map[string]string{"text": "$.text"},
		}, Handler: func(_ context.Context, call sdk.Call) (any, error) {
			c.called("chain.report")
			var in struct{ D int }
			if err := call.Decode(&in); err != nil {
				return nil, err
			}
			return map[string]any{"text": fmt.Sprintf("the answer is %d", in.D)}, nil
		}},
	}
}

// chainPlan: fetch -> double -> report.
func chainPlan() map[string]any {
	return map[string]any{
		"version": "1.0", "goal": "report twice the number", "timezone": "UTC",
		"actions": []any{
			map[string]any{"id": "fetch", "tool": "chain.fetch", "intent": "read", "requires": []any{}, "produces": []any{"n"}, "inputs": map[string]any{}},
			map[string]any{"id": "double", "tool": "chain.double", "intent": "transform", "requires": []any{"n"}, "produces": []any{"d"},
				"input_bindings": map[string]any{"n": "n"}},
			map[string]any{"id": "report", "tool": "chain.report", "intent": "summarize", "requires": []any{"d"}, "produces": []any{"text"},
				"input_bindings": map[string]any{"d": "d"}},
		},
	}
}

// newChainEnv is the harness's stack with the chain tools, no
// human-in-the-loop switches (policy allows every read), and the engine's
// events fed to the server (as the app would through agent.Deps.Events).
// A step that still fails fails the run (on_failure fail).
func newChainEnv(t *testing.T) (*env, *chainTools) {
	return newChainEnvWith(t, agent.Config{OnFailure: contracts.OnFailureFail})
}

// newChainEnvWith is newChainEnv with the engine configured by cfg.
func newChainEnvWith(t *testing.T, cfg agent.Config) (*env, *chainTools) {
	t.Helper()
	ct := &chainTools{calls: map[string]int{}}
	e, h, rec := newStack(t, cfg, []host.Option{host.WithLogger(slog.New(slog.DiscardHandler))}, ct.tools()...)
	var srv *mcpserver.Server
	e.engine = agent.New(cfg, agent.Deps{Tools: h, Store: e.store, Recommender: rec, Events: func(ev agent.Event) {
		if srv != nil {
			srv.RunEvent(ev)
		}
	}})
	var err error
	srv, err = mcpserver.New(mcpserver.Options{
		Engine: e.engine, Runs: e.store, Catalog: h, Version: "test",
		StdioIdentity: &mcpserver.Identity{User: "bob"},
		Tokens: []mcpserver.Token{
			{Token: adminToken, Identity: mcpserver.Identity{User: "ada", Roles: []string{mcpserver.RoleAdmin}}},
			{Token: userToken, Identity: mcpserver.Identity{User: "bob"}},
			{Token: otherToken, Identity: mcpserver.Identity{User: "eve"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	t.Cleanup(func() { _ = srv.Close() })
	return e, ct
}

const otherToken = "other-secret-token"

// failedChainRun executes the chain plan with double broken: a failed run
// whose fetch succeeded. It returns the run id.
func failedChainRun(t *testing.T, c *client.Client, ct *chainTools) string {
	t.Helper()
	ct.setBroken(true)
	code, body := toolError(t, c, "execute", map[string]any{"plan": chainPlan()})
	if code != contracts.CodeToolFailed {
		t.Fatalf("execute with a broken step: code %d %v", code, body)
	}
	details, _ := body["details"].(map[string]any)
	id, _ := details["run_id"].(string)
	if id == "" || details["status"] != "failed" {
		t.Fatalf("failed run: %v", body)
	}
	return id
}

func TestForkRunRetriesFromTheFailedStep(t *testing.T) {
	e, ct := newChainEnv(t)
	transports(t, e, clientOpts{}, func(t *testing.T, c *client.Client) {
		before := map[string]int{"chain.fetch": ct.count("chain.fetch"), "chain.double": ct.count("chain.double"), "chain.report": ct.count("chain.report")}
		failed := failedChainRun(t, c, ct)
		if n := ct.count("chain.fetch") - before["chain.fetch"]; n != 1 {
			t.Fatalf("fetch called %d times by the first run", n)
		}
		if n := ct.count("chain.report") - before["chain.report"]; n != 0 {
			t.Fatalf("report called %d times by the failed run", n)
		}

		ct.setBroken(false) // the tool is fixed
		out := call(t, c, "fork_run", map[string]any{"run_id": failed, "from_action": "double"})
		if out["status"] != "completed" || out["run_id"] == failed {
			t.Fatalf("fork: %v", out)
		}
		if n := ct.count("chain.fetch") - before["chain.fetch"]; n != 1 {
			t.Fatalf("fetch called %d times in all, want 1: the fork must take its recorded result", n)
		}
		if n := ct.count("chain.report") - before["chain.report"]; n != 1 {
			t.Fatalf("report called %d times, want 1", n)
		}
		forked, err := e.engine.Get(context.Background(), out["run_id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if forked.UserID != "bob" || string(forked.State["text"]) != `"the answer is 42"` {
			t.Fatalf("forked run: user %q state %s", forked.UserID, forked.State["text"])
		}
		// The forked run is read, never changed.
		src, err := e.engine.Get(context.Background(), failed)
		if err != nil || src.Status != contracts.RunFailed {
			t.Fatalf("source run: %v %v", src, err)
		}

		// Bad input is a coded error naming the field.
		code, body := toolError(t, c, "fork_run", map[string]any{"run_id": failed, "from_action": "nope"})
		if details, _ := body["details"].(map[string]any); code != contracts.CodeInvalidInput || details["field"] != "from_action" {
			t.Fatalf("unknown action: %d %v", code, body)
		}
		if code, body := toolError(t, c, "fork_run", map[string]any{"run_id": "run_nope", "from_action": "double"}); code != contracts.CodeRunNotFound {
			t.Fatalf("unknown run: %d %v", code, body)
		}
		if code, body := toolError(t, c, "fork_run", map[string]any{"run_id": failed}); code != contracts.CodeInvalidInput {
			t.Fatalf("no from_action: %d %v", code, body)
		}
		if code, body := toolError(t, c, "fork_run", map[string]any{"run_id": failed, "from_action": "double", "plan": map[string]any{"version": "1.0"}}); code/1000 != 1 {
			t.Fatalf("bad plan: %d %v", code, body)
		}
	})
}

func TestForkRunWithEditedPlan(t *testing.T) {
	e, ct := newChainEnv(t)
	c := e.stdioClient(t, clientOpts{})
	failed := failedChainRun(t, c, ct)
	ct.setBroken(false)
	// The edit drops report: the fork runs double only.
	plan := chainPlan()
	plan["actions"] = plan["actions"].([]any)[:2]
	out := call(t, c, "fork_run", map[string]any{"run_id": failed, "from_action": "double", "plan": plan})
	if out["status"] != "completed" {
		t.Fatalf("fork: %v", out)
	}
	if ct.count("chain.fetch") != 1 || ct.count("chain.report") != 0 || ct.count("chain.double") != 2 {
		t.Fatalf("calls: %v", ct.calls)
	}
}

func TestForkRunOwnership(t *testing.T) {
	e, ct := newChainEnv(t)
	ts := e.httpServer(t)
	bob := httpClient(t, ts.URL, userToken, clientOpts{})
	failed := failedChainRun(t, bob, ct)
	ct.setBroken(false)

	// Another user's run is not found, exactly like an unknown one.
	eve := httpClient(t, ts.URL, otherToken, clientOpts{})
	if code, body := toolError(t, eve, "fork_run", map[string]any{"run_id": failed, "from_action": "double"}); code != contracts.CodeRunNotFound {
		t.Fatalf("eve forks bob's run: %d %v", code, body)
	}
	// An admin may fork it; the new run is the admin's.
	ada := httpClient(t, ts.URL, adminToken, clientOpts{})
	out := call(t, ada, "fork_run", map[string]any{"run_id": failed, "from_action": "double"})
	run, err := e.engine.Get(context.Background(), out["run_id"].(string))
	if err != nil || run.UserID != "ada" || run.Status != contracts.RunCompleted {
		t.Fatalf("admin's fork: %+v %v", run, err)
	}
	// And bob cannot see the admin's fork.
	if code, _ := toolError(t, bob, "run_status", map[string]any{"run_id": run.ID}); code != contracts.CodeRunNotFound {
		t.Fatalf("bob reads ada's fork: %d", code)
	}
}

// TestForkRunKeepsPolicyConfirmationsForThePerson: a run started with
// policy confirmations answered in the terminal (ordo run --yes) forks
// over MCP into a run that does not inherit that: policy asks again.
func TestForkRunKeepsPolicyConfirmationsForThePerson(t *testing.T) {
	e, ct := newChainEnv(t)
	ct.setBroken(true)
	p, err := contracts.ParsePlan(mustJSON(t, chainPlan()))
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.engine.Run(context.Background(), agent.Request{Plan: p, UserID: "bob",
		Options: contracts.RunOptions{AutoApprove: true, AutoApprovePolicy: true}})
	if run == nil || run.Status != contracts.RunFailed {
		t.Fatalf("source run: %+v %v", run, err)
	}
	ct.setBroken(false)
	c := e.stdioClient(t, clientOpts{})
	out := call(t, c, "fork_run", map[string]any{"run_id": run.ID, "from_action": "double"})
	fork, err := e.engine.Get(context.Background(), out["run_id"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if fork.ID == run.ID || fork.Options.AutoApprovePolicy || !fork.Options.AutoApprove {
		t.Fatalf("fork options %+v", fork.Options)
	}
}
