package agent

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

const twoStepPlan = `{"version":"1.0","goal":"search and note","timezone":"UTC","actions":[
 {"id":"a1","tool":"web.search","intent":"search","requires":[],"produces":["results"],"inputs":{"query":"weather"}},
 {"id":"a2","tool":"notes.create_page","intent":"write","requires":["results"],"produces":["page_url"],"inputs":{"title":"Weather"},"input_bindings":{"content":"results"}}]}`

func used(prompt, completion, cached int64) *llmtest.Usage {
	return &llmtest.Usage{Prompt: prompt, Completion: completion, Cached: cached}
}

// Every model call's tokens are recorded by role — the built-in LLM
// tools' under "tool" — priced per model, summed, and kept by the store.
func TestUsageRecordedByRoleAndPriced(t *testing.T) {
	m, _ := scripted(t,
		llmtest.Reply{Role: "planner", Usage: used(1000, 200, 800), Content: `{"version":"1.0","goal":"summarise","timezone":"UTC","actions":[
		 {"id":"a1","tool":"llm.summarize","intent":"summarize","requires":[],"produces":["summary"],"inputs":{"text":"a long text"}}]}`},
		llmtest.Reply{Role: "tool", Usage: used(300, 50, 0), Content: "short"},
		llmtest.Reply{Role: "composer", Usage: used(400, 100, 0), Content: "Summarised."})
	store := newStore()
	cached := 0.5
	cfg := Config{Prices: map[string]llm.Price{"test": {Input: 2, Output: 8, Cached: &cached}}}
	run, err := New(cfg, Deps{Tools: newTools(t, builtins(m)...), LLM: m, Store: store}).Run(context.Background(), Request{Goal: "summarise a long text"})
	wantStatus(t, run, err, contracts.RunCompleted)
	cost := func(in, out, cachedIn float64) float64 { return ((in-cachedIn)*2 + cachedIn*0.5 + out*8) / 1e6 }
	want := map[string]contracts.TokenUsage{
		"planner":  {InputTokens: 1000, OutputTokens: 200, CachedTokens: 800, CostUSD: cost(1000, 200, 800), Models: []string{"test"}},
		"tool":     {InputTokens: 300, OutputTokens: 50, CostUSD: cost(300, 50, 0), Models: []string{"test"}},
		"composer": {InputTokens: 400, OutputTokens: 100, CostUSD: cost(400, 100, 0), Models: []string{"test"}},
	}
	total := run.Usage.Total
	if !reflect.DeepEqual(run.Usage.ByRole, want) || total.InputTokens != 1700 || total.OutputTokens != 350 || total.CachedTokens != 800 ||
		math.Abs(total.CostUSD-cost(1700, 350, 800)) > 1e-12 || !reflect.DeepEqual(total.Models, []string{"test"}) {
		t.Fatalf("usage = %+v", run.Usage)
	}
	if run.LLMCalls["tool"] != 1 {
		t.Fatalf("llm calls = %v", run.LLMCalls)
	}
	stored, err := store.Load(context.Background(), run.ID)
	if err != nil || !reflect.DeepEqual(stored.Usage, run.Usage) {
		t.Fatalf("stored usage = %+v (%v)", stored.Usage, err)
	}
}

// A spent step budget fails the run closed before the next step, with a
// coded error naming the budget; the composer is not asked.
func TestStepBudgetFailsClosed(t *testing.T) {
	m, srv := scripted(t, planner(twoStepPlan))
	tt := newTools(t, searchTool(), notesTool())
	cfg := Config{Budgets: contracts.Budgets{Run: contracts.Budget{Steps: 1}}}
	run, err := New(cfg, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "search and note"})
	wantStatus(t, run, err, contracts.RunFailed)
	stop, _ := run.Error.Details["budget"].(contracts.BudgetStop)
	if run.Error.Code != contracts.CodeBudgetExceeded || stop != (contracts.BudgetStop{Budget: "run.steps", Limit: 1, Used: 1, Before: "step"}) {
		t.Fatalf("error = %+v", run.Error)
	}
	if len(tt.Calls("notes.create_page")) != 0 || srv.Count("composer") != 0 || run.Result.Composer != "template" {
		t.Fatalf("work after the budget was spent: tools %v, composer %d", tt.Calls(""), srv.Count("composer"))
	}
}

// A planner failure wraps the planner's error, yet the run fails with the
// budget's code; a run that spent no budget is not stopped.
func TestModelCallBudgetBeforePlanner(t *testing.T) {
	m, srv := scripted(t)
	cfg := Config{Budgets: contracts.Budgets{Run: contracts.Budget{ModelCalls: 1}}}
	e := New(cfg, Deps{Tools: newTools(t, searchTool()), LLM: m})
	run := &contracts.Run{ID: "r", LLMCalls: map[string]int{"planner": 1}}
	err := e.checkBudgets(context.Background(), run, "composer", 0)
	if contracts.CodeOf(err) != contracts.CodeBudgetExceeded {
		t.Fatalf("after one call of one: %v", err)
	}
	if err := e.checkBudgets(context.Background(), &contracts.Run{ID: "r2"}, "planner", 0); err != nil {
		t.Fatal(err)
	}
	cfg.Budgets.Run.ModelCalls = 0
	cfg.Budgets.Run.Tokens = 1
	run, err = New(cfg, Deps{Tools: newTools(t, searchTool()), LLM: m}).Run(context.Background(), Request{Goal: "x",
		Plan: mustPlan(t, `{"version":"1.0","goal":"x","timezone":"UTC","actions":[]}`)})
	wantStatus(t, run, err, contracts.RunCompleted)
	if srv.Count("") != 1 {
		t.Fatalf("composer calls %d, want 1 (the budget was not spent)", srv.Count(""))
	}
}

// With on_exceed ask, a step budget spent before the re-planner stops the
// run at a budget_exceeded interrupt. An approval without a limit above
// what was used is refused and changes nothing; a higher limit re-plans
// the failure (the failed tool is not called again) and the run finishes.
func TestBudgetAskRaisedThenReplans(t *testing.T) {
	m, srv := scripted(t,
		llmtest.Reply{Role: "planner", Usage: used(100, 20, 0), Content: weatherPlan},
		llmtest.Reply{Role: "replanner", Usage: used(100, 20, 0), Content: searchPlan},
		composer("Seoul: found."))
	failing := weatherTool(func(context.Context, sdk.Call) (any, error) { return nil, sdk.ToolError(false, "down") })
	tt := newTools(t, failing, searchTool())
	store := newStore()
	cfg := Config{Budgets: contracts.Budgets{Run: contracts.Budget{Steps: 1}, OnExceed: contracts.OnExceedAsk}}
	e := New(cfg, Deps{Tools: tt, LLM: m, Store: store})
	run, err := e.Run(context.Background(), Request{Goal: "weather in Seoul"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	in := run.Interrupt
	if in.Kind != contracts.InterruptBudgetExceeded || in.ActionID != "a1" || in.Budget == nil ||
		in.Budget.Budget != "run.steps" || in.Budget.Used != 1 || in.Budget.Before != "replanner" || in.Budget.Cause == nil {
		t.Fatalf("interrupt = %+v budget %+v", in, in.Budget)
	}
	for _, answers := range []map[string]any{nil, {"limit": 1}, {"limit": "lots"}} {
		_, err := New(cfg, Deps{Tools: tt, LLM: m, Store: store}).Resume(context.Background(), run.ID, contracts.Decision{Kind: contracts.DecisionApprove, Answers: answers})
		if contracts.CodeOf(err) != contracts.CodeInvalidDecision {
			t.Fatalf("approve with %v: %v", answers, err)
		}
	}
	if got, _ := store.Load(context.Background(), run.ID); got.Seq != run.Seq || got.Status != contracts.RunInterrupted {
		t.Fatalf("a refused decision changed the run: seq %d status %s", got.Seq, got.Status)
	}
	run, err = New(cfg, Deps{Tools: tt, LLM: m, Store: store}).Resume(context.Background(), run.ID,
		contracts.Decision{Kind: contracts.DecisionApprove, Answers: map[string]any{"limit": 5}, By: "ada"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if run.ReplanCount != 1 || len(tt.Calls("weather.get")) != 1 || len(tt.Calls("web.search")) != 1 || srv.Count("replanner") != 1 {
		t.Fatalf("replans %d, tool calls %v", run.ReplanCount, tt.Calls(""))
	}
	if run.Usage.Total.InputTokens != 200+10 || run.LLMCalls["replanner"] != 1 {
		t.Fatalf("usage %+v calls %v", run.Usage.Total, run.LLMCalls)
	}
}

// With on_exceed ask, a composer over budget falls back to the template;
// rejecting a raise fails the run with the budget's error and no other
// model call.
func TestBudgetAskRejected(t *testing.T) {
	m, srv := scripted(t, planner(twoStepPlan))
	tt := newTools(t, searchTool(), notesTool())
	cfg := Config{Budgets: contracts.Budgets{Run: contracts.Budget{Steps: 2}, OnExceed: contracts.OnExceedAsk}}
	e := New(cfg, Deps{Tools: tt, LLM: m})
	run, err := e.Run(context.Background(), Request{Goal: "search and note"})
	wantStatus(t, run, err, contracts.RunCompleted) // both steps ran; the composer fell back to the template
	if run.Result.Composer != "template" || srv.Count("composer") != 0 {
		t.Fatalf("result %+v", run.Result)
	}
	cfg.Budgets.Run = contracts.Budget{Steps: 1}
	m2, srv2 := scripted(t, planner(twoStepPlan))
	tt = newTools(t, searchTool(), notesTool())
	e = New(cfg, Deps{Tools: tt, LLM: m2})
	run, err = e.Run(context.Background(), Request{Goal: "search and note"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.ActionID != "a2" || run.Interrupt.Budget.Budget != "run.steps" {
		t.Fatalf("interrupt %+v", run.Interrupt)
	}
	run, err = e.Resume(context.Background(), run.ID, contracts.Decision{Kind: contracts.DecisionReject})
	wantStatus(t, run, err, contracts.RunFailed)
	if run.Error.Code != contracts.CodeBudgetExceeded || srv2.Count("") != 1 || len(tt.Calls("notes.create_page")) != 0 {
		t.Fatalf("model calls %d, tool calls %v", srv2.Count(""), tt.Calls(""))
	}
}

// A user's daily budget sums their runs in the shared store, whichever
// engine (server) ran them; other users are not counted.
func TestUserDayBudgetAcrossEngines(t *testing.T) {
	store := newStore()
	cfg := Config{Budgets: contracts.Budgets{UserDay: contracts.Budget{ModelCalls: 2}}}
	empty := `{"version":"1.0","goal":"greet","timezone":"UTC","actions":[]}`
	m1, _ := scripted(t, planner(empty), composer("Hello!"))
	run, err := New(cfg, Deps{Tools: newTools(t), LLM: m1, Store: store}).Run(context.Background(), Request{Goal: "hi", UserID: "ada"})
	wantStatus(t, run, err, contracts.RunCompleted)

	m2, srv2 := scripted(t, planner(empty), composer("Hello!"))
	other := New(cfg, Deps{Tools: newTools(t), LLM: m2, Store: store})
	run, err = other.Run(context.Background(), Request{Goal: "hi again", UserID: "ada"})
	wantStatus(t, run, err, contracts.RunFailed)
	stop, _ := run.Error.Details["budget"].(contracts.BudgetStop)
	if run.Error.Code != contracts.CodeBudgetExceeded || stop.Budget != "user_day.model_calls" || stop.Used != 2 || srv2.Count("") != 0 {
		t.Fatalf("error %+v, model calls %d", run.Error, srv2.Count(""))
	}
	run, err = other.Run(context.Background(), Request{Goal: "hi", UserID: "bob"})
	wantStatus(t, run, err, contracts.RunCompleted)
}

// Wall time counts from the run's first step, on the engine's clock: a
// step that takes longer than the budget stops the run before the next.
func TestWallTimeBudget(t *testing.T) {
	var mu sync.Mutex
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	slow := tool("web.search", contracts.RiskRead, `{"type":"object","required":["query"],"properties":{"query":{"type":"string"}}}`,
		`{"type":"object","required":["results"],"properties":{"results":{"type":"string"}}}`, map[string]string{"results": "$.results"},
		func(context.Context, sdk.Call) (any, error) {
			mu.Lock()
			clock = clock.Add(10 * time.Minute)
			mu.Unlock()
			return map[string]any{"results": "found"}, nil
		})
	tt := newTools(t, slow, notesTool())
	e := New(Config{Budgets: contracts.Budgets{Run: contracts.Budget{WallTime: 5 * time.Minute}}}, Deps{Tools: tt})
	e.now = now
	run, err := e.Run(context.Background(), Request{Goal: "search and note", Plan: mustPlan(t, twoStepPlan)})
	wantStatus(t, run, err, contracts.RunFailed)
	stop, _ := run.Error.Details["budget"].(contracts.BudgetStop)
	if stop.Budget != "run.wall_time" || stop.Used != 600 || stop.Limit != 300 || len(tt.Calls("notes.create_page")) != 0 {
		t.Fatalf("error %+v", run.Error)
	}
}

// A user's runs started together cannot each take a step past the day's
// step budget: the engine checks one user's steps one at a time and
// counts the steps it let other runs start that the store does not show
// yet (a call's start is not written).
func TestUserDayStepsBudgetHoldsForParallelCalls(t *testing.T) {
	release, two := make(chan struct{}), make(chan struct{})
	var inTool atomic.Int32
	tools := newTools(t, sdk.Tool{Contract: contracts.Contract{Tool: "slow.wait", Service: "slow", Description: "waits",
		RiskLevel: contracts.RiskRead, InputSchema: []byte(`{"type":"object"}`), OutputSchema: []byte(`{}`)},
		Handler: func(context.Context, sdk.Call) (any, error) {
			if inTool.Add(1) == 2 {
				close(two)
			}
			<-release
			return map[string]any{}, nil
		}})
	cfg := Config{Budgets: contracts.Budgets{UserDay: contracts.Budget{Steps: 2}}}
	e := New(cfg, Deps{Tools: tools, Store: newStore()})
	const calls = 10
	var wg sync.WaitGroup
	var ran atomic.Int32
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := e.Call(context.Background(), CallRequest{Tool: "slow.wait", Args: []byte(`{}`), UserID: "ada"})
			if err == nil && run.Status == contracts.RunCompleted {
				ran.Add(1)
			}
		}()
	}
	<-two // two are in the tool; the others are refused (or, unbounded, follow)
	close(release)
	wg.Wait()
	if ran.Load() != 2 {
		t.Fatalf("%d of %d parallel calls ran under user_day.steps 2", ran.Load(), calls)
	}
	run, err := e.Call(context.Background(), CallRequest{Tool: "slow.wait", Args: []byte(`{}`), UserID: "bob"})
	wantStatus(t, run, err, contracts.RunCompleted) // another user's budget is their own
}

// A plan that passes a large result on from action to action stops once
// the run holds MaxRunBytes, whatever the budgets say (none here, and
// on_exceed ask: no person can raise this bound), before the run, its
// checkpoints and the process grow without end.
func TestRunStopsAtMaxRunBytes(t *testing.T) {
	const each = 8 << 20
	big := strings.Repeat("x", each)
	tt := newTools(t, tool("big.read", contracts.RiskRead, `{"type":"object"}`,
		`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`, map[string]string{"text": "$.text"},
		returns(map[string]any{"text": big})))
	acts := make([]string, 12)
	for i := range acts {
		acts[i] = fmt.Sprintf(`{"id":"a%d","tool":"big.read","intent":"read","requires":[],"produces":["text"]%s}`, i,
			map[bool]string{true: fmt.Sprintf(`,"depends_on":["a%d"]`, i-1)}[i > 0])
	}
	plan := mustPlan(t, `{"version":"1.0","goal":"grow","timezone":"UTC","actions":[`+strings.Join(acts, ",")+`]}`)
	cfg := Config{Budgets: contracts.Budgets{OnExceed: contracts.OnExceedAsk}}
	run, err := New(cfg, Deps{Tools: tt}).Run(context.Background(), Request{Plan: plan})
	wantStatus(t, run, err, contracts.RunFailed)
	if run.Error.Code != contracts.CodeBudgetExceeded || run.Error.Details["limit"] != MaxRunBytes {
		t.Fatalf("error = %+v", run.Error)
	}
	if calls := len(tt.Calls("big.read")); calls >= len(acts) || calls > MaxRunBytes/each {
		t.Fatalf("%d calls of %d bytes each: the run was not stopped at %d bytes", calls, each, MaxRunBytes)
	}
}

// With no budgets configured a run may still make only
// DefaultRunModelCalls model calls: the next one is CodeBudgetExceeded
// naming run.model_calls; a configured limit or a person's raise replaces
// the default.
func TestDefaultModelCallBound(t *testing.T) {
	ctx := context.Background()
	e := New(Config{}, Deps{Tools: newTools(t, searchTool())})
	run := &contracts.Run{ID: "r", LLMCalls: map[string]int{"planner": 1, "filler": DefaultRunModelCalls - 2}}
	if err := e.checkBudgets(ctx, run, "verifier", 0); err != nil {
		t.Fatalf("one call left: %v", err)
	}
	run.LLMCalls["verifier"] = 1
	err := e.checkBudgets(ctx, run, "filler", 0)
	stop, _ := contracts.AsError(err).Details["budget"].(contracts.BudgetStop)
	if contracts.CodeOf(err) != contracts.CodeBudgetExceeded ||
		stop != (contracts.BudgetStop{Budget: "run.model_calls", Limit: DefaultRunModelCalls, Used: DefaultRunModelCalls, Before: "filler"}) {
		t.Fatalf("at the default bound: %v", err)
	}
	if err := New(Config{Budgets: contracts.Budgets{Run: contracts.Budget{ModelCalls: 2 * DefaultRunModelCalls}}}, Deps{Tools: newTools(t, searchTool())}).
		checkBudgets(ctx, run, "filler", 0); err != nil {
		t.Fatalf("a configured limit above the default: %v", err)
	}
	run.Decisions = append(run.Decisions, contracts.DecisionRecord{
		Interrupt: contracts.Interrupt{Kind: contracts.InterruptBudgetExceeded, Budget: &stop},
		Decision:  contracts.Decision{Kind: contracts.DecisionApprove, Answers: map[string]any{"limit": float64(DefaultRunModelCalls + 10)}}})
	if err := e.checkBudgets(ctx, run, "filler", 0); err != nil {
		t.Fatalf("after a person raised it: %v", err)
	}
}
