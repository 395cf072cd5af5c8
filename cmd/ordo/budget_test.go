package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testmcp"
)

// greetPlan is the one-step plan the scripted models of these tests answer with.
const greetPlan = `{"version":"1.0","goal":"greet","timezone":"UTC","actions":[
	{"id":"greet","tool":"text.template","intent":"transform","requires":[],"produces":["text"],
	 "inputs":{"template":"hello {{name}}","values":{"name":"world"}}}]}`

// budgetServer starts `ordo serve` (stdio) planning with a scripted model
// that reports 150 tokens for the plan (100 of them cached) and 37 for
// the answer, priced per million tokens at 2 USD input, 0.5 cached and
// 8 output, under the budgets given as YAML.
func budgetServer(t *testing.T, budgets string) (*client.Client, *env) {
	t.Helper()
	srv := llmtest.New(t,
		llmtest.Reply{Role: "planner", Content: greetPlan, Usage: &llmtest.Usage{Prompt: 120, Completion: 30, Cached: 100}},
		llmtest.Reply{Role: "composer", Content: "Said hello.", Usage: &llmtest.Usage{Prompt: 30, Completion: 7}})
	e := newEnv(t)
	cfg := fmt.Sprintf("hitl: {enabled: false}\nllm:\n  base_url: %s\n  model: test-model\n  prices:\n    test-model: {input: 2, output: 8, cached: 0.5}\nbudgets:\n%s", srv.URL, budgets)
	return serveStdio(t, e, cfg), e
}

func callBudget(t *testing.T, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestServeBudgetFailsClosed: a run whose token budget the plan spent
// fails before its first step with error 4006 naming the budget; the tool
// never runs and no answer is composed.
func TestServeBudgetFailsClosed(t *testing.T) {
	t.Parallel()
	c, _ := budgetServer(t, "  run: {tokens: 100}\n")
	res := callBudget(t, c, "execute", map[string]any{"goal": "greet the world"})
	var e struct {
		Code    contracts.Code
		Details struct {
			Budget contracts.BudgetStop
			Steps  []any
		}
	}
	if err := json.Unmarshal([]byte(testmcp.Text(res)), &e); err != nil || !res.IsError {
		t.Fatalf("execute: %v %s", err, testmcp.Text(res))
	}
	if want := (contracts.BudgetStop{Budget: "run.tokens", Limit: 100, Used: 150, Before: "step"}); e.Code != contracts.CodeBudgetExceeded || e.Details.Budget != want || len(e.Details.Steps) != 0 {
		t.Fatalf("error %+v, want code %d and budget %+v", e, contracts.CodeBudgetExceeded, want)
	}
}

// TestServeBudgetAskThenUsageShown: with on_exceed ask the run waits at a
// budget_exceeded interrupt; approve without a higher limit is refused,
// with one the run finishes. run_status and `ordo runs show` then carry
// its tokens by role and in total, and their cost at the configured
// prices.
func TestServeBudgetAskThenUsageShown(t *testing.T) {
	t.Parallel()
	c, e := budgetServer(t, "  run: {tokens: 100}\n  on_exceed: ask\n")
	res := callBudget(t, c, "execute", map[string]any{"goal": "greet the world"})
	var view struct {
		RunID     string `json:"run_id"`
		Status    string
		Interrupt struct {
			Kind      string
			Budget    contracts.BudgetStop
			Decisions []string
		}
	}
	if err := json.Unmarshal([]byte(testmcp.Text(res)), &view); err != nil || res.IsError || view.Status != "interrupted" ||
		view.Interrupt.Kind != "budget_exceeded" || view.Interrupt.Budget.Budget != "run.tokens" || view.Interrupt.Budget.Used != 150 ||
		strings.Join(view.Interrupt.Decisions, ",") != "approve,reject" {
		t.Fatalf("execute: %v %s", err, testmcp.Text(res))
	}
	res = callBudget(t, c, "approve", map[string]any{"run_id": view.RunID, "decision": "approve", "answers": map[string]any{"limit": 150}})
	if !res.IsError || !strings.Contains(testmcp.Text(res), `"code":5003`) {
		t.Fatalf("approve at the amount used: %s", testmcp.Text(res))
	}
	res = callBudget(t, c, "approve", map[string]any{"run_id": view.RunID, "decision": "approve", "answers": map[string]any{"limit": 1000}})
	if res.IsError || !strings.Contains(testmcp.Text(res), `"completed"`) {
		t.Fatalf("approve with a higher limit: %s", testmcp.Text(res))
	}

	var run contracts.Run
	res = callBudget(t, c, "run_status", map[string]any{"run_id": view.RunID})
	if err := json.Unmarshal([]byte(testmcp.Text(res)), &run); err != nil || res.IsError {
		t.Fatalf("run_status: %v %s", err, testmcp.Text(res))
	}
	cost := (20*2 + 100*0.5 + 30*8 + 30*2 + 7*8) / 1e6
	total := run.Usage.Total
	if p := run.Usage.ByRole["planner"]; p.InputTokens != 120 || p.CachedTokens != 100 || p.OutputTokens != 30 ||
		total.InputTokens != 150 || total.OutputTokens != 37 || math.Abs(total.CostUSD-cost) > 1e-12 ||
		strings.Join(total.Models, ",") != "test-model" {
		t.Fatalf("run_status usage %+v", run.Usage)
	}
	c.Close()

	r := e.ordo("", "runs", "show", view.RunID)
	r.want(t, 0)
	for _, want := range []string{"150 in (100 cached), 37 out  test-model", "$0.000446"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("runs show lacks %q:\n%s", want, r.stdout)
		}
	}
}
