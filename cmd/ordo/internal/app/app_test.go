package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"testing"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func envOf(kv ...string) config.Env {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func load(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), t.TempDir(), envOf("HOME", t.TempDir(), "ORDO_DATA_DIR", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// open assembles an app on the embedded store with no bundled plugins and
// one in-process tool that needs scope ledger:write.
func open(t *testing.T, cfg *config.Config) *App {
	t.Helper()
	cfg.Bundled.Enabled = false
	a, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler), Options{Env: envOf()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	prov, err := host.InProcess(sdk.Tool{
		Contract: contracts.Contract{
			Tool: "ledger.record", Service: "ledger", RiskLevel: contracts.RiskWrite, ScopesRequired: []string{"ledger:write"},
			Description:  "Record an entry.",
			InputSchema:  json.RawMessage(`{"type":"object","required":["entry"],"properties":{"entry":{"type":"string"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"}}}`),
		},
		Handler: func(context.Context, sdk.Call) (any, error) { return map[string]bool{"ok": true}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Host.AddProvider(context.Background(), "ledger", "test", prov); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestScopesComeFromPolicy: an MCP caller's scopes are the configured
// ones for its user, whatever the request claims.
func TestScopesComeFromPolicy(t *testing.T) {
	cfg := load(t, "hitl: {enabled: false}\npolicy:\n  default_scopes: []\n  users:\n    ada: [ledger:write]\n")
	a := open(t, cfg)
	eng := scoped{a.Engine, cfg.Policy}
	plan := &contracts.Plan{Version: "1.0", Goal: "record", Timezone: "UTC", Actions: []contracts.Action{{
		ID: "r", Tool: "ledger.record", Intent: "write", Requires: []string{}, Produces: []string{}, Inputs: map[string]any{"entry": "x"},
	}}}
	for _, tc := range []struct {
		user    string
		claimed []string
		want    contracts.RunStatus
	}{
		{"ada", nil, contracts.RunReady},
		{"bob", []string{"ledger:write", "*"}, contracts.RunFailed}, // claims are ignored
	} {
		run, err := eng.Plan(context.Background(), agent.Request{Plan: plan, UserID: tc.user, Options: contracts.RunOptions{Scopes: tc.claimed}})
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != tc.want {
			t.Errorf("%s: status %s, want %s (%v)", tc.user, run.Status, tc.want, run.Error)
		}
		if tc.want == contracts.RunFailed && !errors.Is(run.Error, &contracts.Error{Code: contracts.CodePolicyDenied}) {
			t.Errorf("%s: error %v, want a policy denial", tc.user, run.Error)
		}
	}
}

func TestEngineConfigFromPolicy(t *testing.T) {
	cfg := load(t, "replan_budget: 0\npolicy:\n  tenant: {allow_destructive: false, allow_external_send: true}\n  deny_tools: [files.delete]\n")
	ec := EngineConfig(cfg)
	if !ec.Policy.DenyDestructive || ec.Policy.DenyExternalSend || ec.Policy.DenyTools[0] != "files.delete" ||
		ec.Policy.ConfirmTools[0] != "chat." || ec.ReplanBudget >= 0 {
		t.Errorf("engine config %+v", ec)
	}
	if m := ec.Memory; !m.Collect || m.Examples != 3 || !m.ToolAdvice || m.AutoApprove {
		t.Errorf("memory defaults %+v", m)
	}
	off := load(t, "memory: {enabled: false, examples: 5, tool_advice: true}\n")
	if m := EngineConfig(off).Memory; m != (agent.MemoryConfig{}) {
		t.Errorf("memory off still uses memory: %+v", m)
	}
}

func TestTokens(t *testing.T) {
	cfg := load(t, "http:\n  tokens:\n    - {name: ada, token_env: ADA_TOKEN, role: admin}\n    - {name: bo, token: bo-token-0123456789, role: user}\n")
	toks, err := Tokens(cfg, envOf("ADA_TOKEN", "ada-secret-0123456789"))
	if err != nil || len(toks) != 2 || toks[0].Token != "ada-secret-0123456789" || !toks[0].Has("admin") || toks[1].User != "bo" {
		t.Fatalf("tokens %+v, %v", toks, err)
	}
	_, err = Tokens(cfg, envOf())
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeInvalidConfig || ce.Details["key"] != "http.tokens[0].token_env" {
		t.Errorf("unset token variable: %v", err)
	}
}

// llm.max_retries reaches the provider as written: 0 is one request, the
// default 2 is three (the provider would otherwise read 0 as "default").
func TestLLMMaxRetriesMapping(t *testing.T) {
	for _, tc := range []struct {
		retries string
		calls   int
	}{{"\n  max_retries: 0", 1}, {"", 3}} {
		busy := llmtest.Reply{Status: http.StatusServiceUnavailable, Content: "busy"}
		srv := llmtest.New(t, busy, busy, busy, busy)
		m, err := newLLM(load(t, "llm:\n  base_url: "+srv.URL+tc.retries+"\n"), envOf())
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: "role: planner"}}})
		if err == nil || srv.Count("") != tc.calls {
			t.Errorf("%q: err %v, %d requests, want %d", tc.retries, err, srv.Count(""), tc.calls)
		}
	}
}

// A retry over MCP (approve {decision: retry}) is a fork: the new run has
// the scopes policy grants the caller, not those of the run it retries.
func TestRetryTakesTheCallersScopes(t *testing.T) {
	cfg := load(t, "hitl: {enabled: false}\npolicy:\n  default_scopes: []\n  users:\n    ada: [ledger:write]\n")
	a := open(t, cfg)
	eng := scoped{a.Engine, cfg.Policy}
	ctx := context.Background()
	plan := &contracts.Plan{Version: "1.0", Goal: "record", Timezone: "UTC", Actions: []contracts.Action{{
		ID: "r", Tool: "ledger.record", Intent: "write", Requires: []string{}, Produces: []string{}, Inputs: map[string]any{"entry": "x"},
	}}}
	src, err := eng.Plan(ctx, agent.Request{Plan: plan, UserID: "ada"})
	if err != nil || src.Status != contracts.RunReady {
		t.Fatalf("plan: %v %+v", err, src)
	}
	if _, err := a.Engine.Cancel(ctx, src.ID, "ada"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user string
		want contracts.RunStatus
	}{{"bob", contracts.RunFailed}, {"ada", contracts.RunCompleted}} {
		run, err := eng.Retry(ctx, agent.ForkRequest{RunID: src.ID, UserID: tc.user})
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != tc.want || tc.want == contracts.RunFailed && !errors.Is(run.Error, &contracts.Error{Code: contracts.CodePolicyDenied}) {
			t.Errorf("%s retried: %s %v, want %s", tc.user, run.Status, run.Error, tc.want)
		}
	}
}
