package agent

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// rendezvous tools: each waits until the other has started, so they can
// only both finish if they ran at the same time.
func TestParallelActionsOverlap(t *testing.T) {
	arrived := make(chan string, 2)
	both := make(chan struct{})
	go func() { <-arrived; <-arrived; close(both) }()
	meet := func(name string) sdk.Handler {
		return func(ctx context.Context, c sdk.Call) (any, error) {
			arrived <- name
			select {
			case <-both:
			case <-time.After(5 * time.Second):
				return nil, sdk.ToolError(false, "the other branch never started")
			}
			return map[string]any{"v": name}, nil
		}
	}
	out := `{"type":"object","required":["v"],"properties":{"v":{"type":"string"}}}`
	tt := newTools(t,
		tool("left.run", contracts.RiskRead, `{"type":"object"}`, out, map[string]string{"left": "$.v"}, meet("left")),
		tool("right.run", contracts.RiskRead, `{"type":"object"}`, out, map[string]string{"right": "$.v"}, meet("right")))
	plan := mustPlan(t, `{"version":"1.0","goal":"both","timezone":"UTC","actions":[
	 {"id":"l","tool":"left.run","intent":"read","requires":[],"produces":["left"]},
	 {"id":"r","tool":"right.run","intent":"read","requires":[],"produces":["right"]}]}`)
	run, err := New(Config{Parallelism: 2}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: plan})
	wantStatus(t, run, err, contracts.RunCompleted)
	var done []contracts.StepRecord
	for _, s := range run.Steps {
		if s.Status == contracts.StepSucceeded {
			done = append(done, s)
		}
	}
	if len(done) != 2 || !(done[0].StartedAt.Before(done[1].EndedAt) && done[1].StartedAt.Before(done[0].EndedAt)) {
		t.Fatalf("intervals do not overlap: %+v", done)
	}
	if got := run.Plans[0].Levels; len(got) != 1 || len(got[0]) != 2 {
		t.Fatalf("levels = %v", got)
	}
}

// constraints.allow_parallel false runs independent actions one at a time,
// whatever Parallelism allows: no two tool calls are ever in flight.
func TestAllowParallelFalseRunsOneAtATime(t *testing.T) {
	var mu sync.Mutex
	inFlight, most := 0, 0
	step := func(ctx context.Context, c sdk.Call) (any, error) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inFlight--
		mu.Unlock()
		return map[string]any{"v": "done"}, nil
	}
	out := `{"type":"object","required":["v"],"properties":{"v":{"type":"string"}}}`
	tt := newTools(t,
		tool("a.run", contracts.RiskRead, `{"type":"object"}`, out, map[string]string{"a": "$.v"}, step),
		tool("b.run", contracts.RiskRead, `{"type":"object"}`, out, map[string]string{"b": "$.v"}, step),
		tool("c.run", contracts.RiskRead, `{"type":"object"}`, out, map[string]string{"c": "$.v"}, step))
	plan := mustPlan(t, `{"version":"1.0","goal":"three","timezone":"UTC","constraints":{"allow_parallel":false},"actions":[
	 {"id":"a","tool":"a.run","intent":"read","requires":[],"produces":["a"]},
	 {"id":"b","tool":"b.run","intent":"read","requires":[],"produces":["b"]},
	 {"id":"c","tool":"c.run","intent":"read","requires":[],"produces":["c"]}]}`)
	run, err := New(Config{Parallelism: 4}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: plan})
	wantStatus(t, run, err, contracts.RunCompleted)
	if most != 1 {
		t.Fatalf("%d calls were in flight at once, want 1", most)
	}
}

// A failing branch leaves the other branch's state; the failing call is
// retried by the host's one retry loop (retries.max_attempts, a retryable
// tool error, the same idempotency key), not by the engine under new keys.
func TestFailingBranchKeepsOtherBranchState(t *testing.T) {
	out := `{"type":"object","required":["v"],"properties":{"v":{"type":"string"}}}`
	var mu sync.Mutex
	var keys []string
	h, err := host.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	p, err := host.InProcess(
		tool("good.run", contracts.RiskRead, `{"type":"object"}`, out, map[string]string{"good": "$.v"}, returns(map[string]any{"v": "fine"})),
		tool("bad.run", contracts.RiskRead, `{"type":"object"}`, out, map[string]string{"bad": "$.v"},
			func(_ context.Context, c sdk.Call) (any, error) {
				mu.Lock()
				keys = append(keys, c.IdempotencyKey)
				mu.Unlock()
				return nil, sdk.ToolError(true, "boom")
			}))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddProvider(context.Background(), "t", "1", p); err != nil {
		t.Fatal(err)
	}
	plan := mustPlan(t, `{"version":"1.0","goal":"two","timezone":"UTC","actions":[
	 {"id":"g","tool":"good.run","intent":"read","requires":[],"produces":["good"]},
	 {"id":"b","tool":"bad.run","intent":"read","requires":[],"produces":["bad"],"retries":{"max_attempts":2}}]}`)
	run, err := New(Config{Parallelism: 2, OnFailure: contracts.OnFailureFail}, Deps{Tools: h}).Run(context.Background(), Request{Plan: plan})
	wantStatus(t, run, err, contracts.RunFailed)
	if stateOf(t, run, "good") != "fine" || run.State["bad"] != nil || len(run.State) != 1 {
		t.Fatalf("state = %v", run.State)
	}
	if len(keys) != 2 || keys[0] != keys[1] {
		t.Fatalf("bad.run calls under keys %v, want 2 (retries.max_attempts) under one key", keys)
	}
	if run.Error.Code != contracts.CodeToolFailed {
		t.Fatalf("error = %+v", run.Error)
	}
}

func TestReplanBudgetExhaustedFailsClosedWithAuditTrail(t *testing.T) {
	replies := []llmtest.Reply{planner(weatherPlan)}
	for range 3 {
		replies = append(replies, replanner(weatherPlan))
	}
	m, srv := scripted(t, replies...)
	tt := newTools(t, weatherTool(func(context.Context, sdk.Call) (any, error) { return nil, sdk.ToolError(false, "down") }))
	run, err := New(Config{ReplanBudget: 3}, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "weather"})
	wantStatus(t, run, err, contracts.RunFailed)
	if run.Error.Code != contracts.CodeReplanExhausted || run.ReplanCount != 3 || len(run.Plans) != 4 {
		t.Fatalf("error=%+v replans=%d plans=%d", run.Error, run.ReplanCount, len(run.Plans))
	}
	failed := 0
	for _, s := range run.Steps {
		if s.Status == contracts.StepFailed {
			failed++
		}
	}
	if failed != 4 || len(tt.Calls("")) != 4 || srv.Count("") != 4 || srv.Pending() != 0 {
		t.Fatalf("failed records=%d calls=%d llm=%d", failed, len(tt.Calls("")), srv.Count(""))
	}
}

func TestCancelStopsAtStepBoundaryAndExecuteContinues(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := `{"type":"object","required":["v"],"properties":{"v":{"type":"string"}}}`
	tt := newTools(t,
		tool("first.run", contracts.RiskRead, `{"type":"object"}`, out, map[string]string{"x": "$.v"},
			func(context.Context, sdk.Call) (any, error) { cancel(); return map[string]any{"v": "1"}, nil }),
		tool("second.run", contracts.RiskRead, `{"type":"object"}`, out, map[string]string{"y": "$.v"}, returns(map[string]any{"v": "2"})))
	plan := mustPlan(t, `{"version":"1.0","goal":"seq","timezone":"UTC","actions":[
	 {"id":"a1","tool":"first.run","intent":"read","requires":[],"produces":["x"]},
	 {"id":"a2","tool":"second.run","intent":"read","requires":["x"],"produces":["y"]}]}`)
	store := newStore()
	run, err := New(Config{}, Deps{Tools: tt, Store: store}).Run(ctx, Request{Plan: plan})
	wantStatus(t, run, err, contracts.RunReady)
	if run.Error == nil || run.Error.Code != contracts.CodeCancelled || len(tt.Calls("second.run")) != 0 || stateOf(t, run, "x") != "1" {
		t.Fatalf("error=%+v state=%v", run.Error, run.State)
	}
	run, err = New(Config{}, Deps{Tools: tt, Store: store}).Execute(context.Background(), run.ID)
	wantStatus(t, run, err, contracts.RunCompleted)
	if len(tt.Calls("first.run")) != 1 || stateOf(t, run, "y") != "2" {
		t.Fatalf("calls=%v", tt.Calls(""))
	}
}
