package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/plugins/sdk"
)

const forkPlan = `{"version":"1.0","goal":"fetch, format, publish","timezone":"UTC","actions":[
 {"id":"fetch","tool":"data.fetch","intent":"read","requires":[],"produces":["rows"],"inputs":{"q":"sales"}},
 {"id":"side","tool":"data.fetch","intent":"read","requires":[],"produces":["other"],"inputs":{"q":"costs"}},
 {"id":"format","tool":"data.format","intent":"transform","requires":["rows"],"produces":["text"],"input_bindings":{"rows":"rows"}},
 {"id":"publish","tool":"data.publish","intent":"write","requires":["text"],"produces":["url"],"input_bindings":{"text":"text"}}]}`

// forkTools: format fails until fixed is set.
func forkTools(t *testing.T, fixed *atomic.Bool) *testTools {
	obj := func(prop string) string {
		return `{"type":"object","required":["` + prop + `"],"properties":{"` + prop + `":{}}}`
	}
	return newTools(t,
		tool("data.fetch", contracts.RiskRead, obj("q"), obj("rows"), map[string]string{"rows": "$.rows", "other": "$.rows"},
			func(_ context.Context, c sdk.Call) (any, error) {
				return map[string]any{"rows": "rows of " + c.Payload["q"].(string)}, nil
			}),
		tool("data.format", contracts.RiskRead, obj("rows"), obj("text"), map[string]string{"text": "$.text"},
			func(_ context.Context, c sdk.Call) (any, error) {
				if !fixed.Load() {
					return nil, sdk.ToolError(false, "formatter down")
				}
				return map[string]any{"text": "table: " + c.Payload["rows"].(string)}, nil
			}),
		tool("data.publish", contracts.RiskRead, obj("text"), obj("url"), map[string]string{"url": "$.url"},
			func(_ context.Context, c sdk.Call) (any, error) {
				return map[string]any{"url": "https://x/" + c.Payload["text"].(string)}, nil
			}),
	)
}

// A failed run is not a dead end: a fork from the failed step takes the
// results before it (no call repeated) and runs the rest.
func TestForkFromFailedStep(t *testing.T) {
	var fixed atomic.Bool
	tt := forkTools(t, &fixed)
	store := newStore()
	e := New(Config{OnFailure: contracts.OnFailureFail}, Deps{Tools: tt, Store: store})
	ctx := context.Background()
	src, err := e.Run(ctx, Request{Plan: mustPlan(t, forkPlan), UserID: "ada"})
	wantStatus(t, src, err, contracts.RunFailed)
	if n := len(tt.Calls("data.fetch")); n != 2 {
		t.Fatalf("fetch called %d times", n)
	}

	if _, err := e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "nope"}); contracts.CodeOf(err) != contracts.CodeInvalidInput {
		t.Fatalf("fork from an unknown action: %v", err)
	}
	if _, err := e.Fork(ctx, ForkRequest{RunID: "run_missing", FromAction: "format"}); contracts.CodeOf(err) != contracts.CodeRunNotFound {
		t.Fatalf("fork of an unknown run: %v", err)
	}

	fixed.Store(true)
	run, err := e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "format"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if n := len(tt.Calls("data.fetch")); n != 2 {
		t.Fatalf("the fork called fetch again: %d calls", n)
	}
	if run.ID == src.ID || run.UserID != "ada" || run.Plans[0].Source != "fork" || run.LLMCalls["planner"] != 0 {
		t.Fatalf("fork run: id %s user %s plans %+v", run.ID, run.UserID, run.Plans)
	}
	if got := stateOf(t, run, "url"); got != "https://x/table: rows of sales" {
		t.Fatalf("url = %v", got)
	}
	again, _ := store.Load(ctx, src.ID)
	if again.Status != contracts.RunFailed || again.Seq != src.Seq {
		t.Fatalf("the forked run changed: %s seq %d", again.Status, again.Seq)
	}

	// An edited plan is validated against the state taken over.
	edited := mustPlan(t, `{"version":"1.0","goal":"publish raw","timezone":"UTC","actions":[
	 {"id":"fetch","tool":"data.fetch","intent":"read","requires":[],"produces":["rows"],"inputs":{"q":"sales"}},
	 {"id":"publish","tool":"data.publish","intent":"write","requires":["rows"],"produces":["url"],"input_bindings":{"text":"rows"}}]}`)
	run, err = e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "publish", Plan: edited})
	wantStatus(t, run, err, contracts.RunCompleted)
	if got := stateOf(t, run, "url"); got != "https://x/rows of sales" || len(tt.Calls("data.fetch")) != 2 {
		t.Fatalf("edited fork: url %v, fetch calls %d", got, len(tt.Calls("data.fetch")))
	}
	bad := mustPlan(t, `{"version":"1.0","goal":"x","timezone":"UTC","actions":[
	 {"id":"publish","tool":"data.publish","intent":"write","requires":["nothing"],"produces":["url"]}]}`)
	run, err = e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "publish", Plan: bad})
	if err != nil || run.Status != contracts.RunFailed || run.Error.Code != contracts.CodePlanFailed {
		t.Fatalf("a fork with a plan that does not check: %v %+v", err, run)
	}
}

// The store's log of a run the engine drove folds back to the run it
// returned, entry by entry, and each step boundary is one entry.
func TestRunLogFoldsToTheRun(t *testing.T) {
	var fixed atomic.Bool
	fixed.Store(true)
	tt := forkTools(t, &fixed)
	store := newStore()
	run, err := New(Config{}, Deps{Tools: tt, Store: store}).Run(context.Background(), Request{Plan: mustPlan(t, forkPlan)})
	wantStatus(t, run, err, contracts.RunCompleted)
	entries, err := store.Log(context.Background(), run.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	folded, err := contracts.FoldRun(entries)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(run)
	got, _ := json.Marshal(folded)
	if string(want) != string(got) {
		t.Fatalf("folded log differs from the run\nwant %s\ngot  %s", want, got)
	}
	// created running (with the checked plan) before the first call, 3
	// steps, the last step with the completion
	if len(entries) != 5 || int64(len(entries)) != run.Seq || entries[0].Run.Status != contracts.RunRunning ||
		len(entries[4].Steps) != 1 || entries[4].Status != contracts.RunCompleted {
		for _, e := range entries {
			t.Logf("%d %s %s", e.Seq, e.Kind(), e.Summary())
		}
		t.Fatalf("%d entries for seq %d, want 5", len(entries), run.Seq)
	}
}

// failedFork runs forkPlan with format broken, on_failure fail (budgets
// cfg's), then fixes format: the failed run to fork, its tools and engine.
func failedFork(t *testing.T, budgets contracts.Budgets) (*testTools, *Engine, *contracts.Run) {
	t.Helper()
	var fixed atomic.Bool
	tt := forkTools(t, &fixed)
	e := New(Config{OnFailure: contracts.OnFailureFail, Budgets: budgets}, Deps{Tools: tt, Store: newStore()})
	src, err := e.Run(context.Background(), Request{Plan: mustPlan(t, forkPlan), UserID: "ada"})
	wantStatus(t, src, err, contracts.RunFailed)
	fixed.Store(true)
	return tt, e, src
}

// A fork binds the values the steps it keeps produced, even where a step
// it runs again had overwritten one of them (format2 below writes text
// after publish read format's): the fork from publish must publish
// format's text, not an unbound payload.
func TestForkBindsWhatTheKeptStepsProduced(t *testing.T) {
	var fixed atomic.Bool
	fixed.Store(true)
	tt := forkTools(t, &fixed)
	e := New(Config{OnFailure: contracts.OnFailureFail}, Deps{Tools: tt, Store: newStore()})
	ctx := context.Background()
	plan := `{"version":"1.0","goal":"publish, then format the link","timezone":"UTC","actions":[
	 {"id":"fetch","tool":"data.fetch","intent":"read","requires":[],"produces":["rows"],"inputs":{"q":"sales"}},
	 {"id":"format","tool":"data.format","intent":"transform","requires":["rows"],"produces":["text"],"input_bindings":{"rows":"rows"}},
	 {"id":"publish","tool":"data.publish","intent":"write","requires":[],"depends_on":["format"],"produces":["url"],"input_bindings":{"text":"text"}},
	 {"id":"format2","tool":"data.format","intent":"transform","requires":["url"],"produces":["text"],"input_bindings":{"rows":"url"}}]}`
	src, err := e.Run(ctx, Request{Plan: mustPlan(t, plan), UserID: "ada"})
	wantStatus(t, src, err, contracts.RunCompleted)

	run, err := e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "publish"})
	wantStatus(t, run, err, contracts.RunCompleted)
	calls := tt.Calls("data.publish")
	if len(calls) != 2 || calls[1].Payload["text"] != "table: rows of sales" {
		t.Fatalf("the fork published %+v, want format's text", calls)
	}
	if n, m := len(tt.Calls("data.fetch")), len(tt.Calls("data.format")); n != 1 || m != 3 {
		t.Fatalf("fetch called %d times, format %d: want 1 and 3 (format2 again only)", n, m)
	}
	if got := stateOf(t, run, "text"); got != "table: https://x/table: rows of sales" {
		t.Fatalf("text = %v", got)
	}
}

// An edited plan that changes an action before the fork point runs that
// action again, and what depends on it: a recorded result is reused only
// for the call the new plan would make. An edit of what a person reads
// (summary) reuses it.
func TestForkRunsAgainWhatTheEditChanged(t *testing.T) {
	tt, e, src := failedFork(t, contracts.Budgets{})
	ctx := context.Background()

	costs := strings.Replace(forkPlan, `"q":"sales"`, `"q":"costs"`, 1)
	run, err := e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "publish", Plan: mustPlan(t, costs)})
	wantStatus(t, run, err, contracts.RunCompleted)
	if got := stateOf(t, run, "url"); got != "https://x/table: rows of costs" {
		t.Fatalf("url = %v: the edited fetch was not run again", got)
	}
	fetches := tt.Calls("data.fetch")
	if len(fetches) != 3 || fetches[2].Payload["q"] != "costs" {
		t.Fatalf("fetch calls %+v: want the edited one only once more", fetches)
	}

	summary := strings.Replace(forkPlan, `"intent":"read","requires":[],"produces":["rows"]`, `"intent":"read","summary":"Read the sales","requires":[],"produces":["rows"]`, 1)
	run, err = e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "format", Plan: mustPlan(t, summary)})
	wantStatus(t, run, err, contracts.RunCompleted)
	if n := len(tt.Calls("data.fetch")); n != 3 {
		t.Fatalf("a summary edit called fetch again: %d calls", n)
	}

	// A plan of only the rest binds what the steps it leaves out produced.
	rest := mustPlan(t, `{"version":"1.0","goal":"publish raw","timezone":"UTC","actions":[
	 {"id":"publish","tool":"data.publish","intent":"write","requires":["rows"],"produces":["url"],"input_bindings":{"text":"rows"}}]}`)
	run, err = e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "publish", Plan: rest})
	wantStatus(t, run, err, contracts.RunCompleted)
	if got := stateOf(t, run, "url"); got != "https://x/rows of sales" || len(tt.Calls("data.fetch")) != 3 {
		t.Fatalf("fork with the rest only: url %v, fetch calls %d", got, len(tt.Calls("data.fetch")))
	}
}

// A fork calls no model for the steps it keeps: not the planner (the plan
// is the recorded one) and not the filler that bound a kept step's
// payload; the step it runs again is bound in code from the kept state.
func TestForkCallsNoModelForKeptSteps(t *testing.T) {
	var fixed atomic.Bool
	tt := forkTools(t, &fixed)
	plan := `{"version":"1.0","goal":"fetch and format","timezone":"UTC","actions":[
	 {"id":"fetch","tool":"data.fetch","intent":"read","requires":[],"produces":["rows"]},
	 {"id":"format","tool":"data.format","intent":"transform","requires":["rows"],"produces":["text"],"input_bindings":{"rows":"rows"}}]}`
	m, srv := scripted(t, planner(plan), llmtest.Reply{Role: "filler", Content: `{"q":"sales"}`}, composer("It failed."), composer("Done."))
	e := New(Config{OnFailure: contracts.OnFailureFail}, Deps{Tools: tt, Store: newStore(), LLM: m})
	ctx := context.Background()
	src, err := e.Run(ctx, Request{Goal: "fetch and format the sales", UserID: "ada"})
	wantStatus(t, src, err, contracts.RunFailed)
	if srv.Count("planner") != 1 || srv.Count("filler") != 1 || len(tt.Calls("data.fetch")) != 1 {
		t.Fatalf("source: planner %d filler %d fetch %d", srv.Count("planner"), srv.Count("filler"), len(tt.Calls("data.fetch")))
	}
	fixed.Store(true)
	run, err := e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "format"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if srv.Count("planner") != 1 || srv.Count("filler") != 1 || run.LLMCalls["planner"] != 0 || run.LLMCalls["filler"] != 0 {
		t.Fatalf("the fork called a model for kept steps: planner %d filler %d, run %v", srv.Count("planner"), srv.Count("filler"), run.LLMCalls)
	}
	if len(tt.Calls("data.fetch")) != 1 || stateOf(t, run, "text") != "table: rows of sales" {
		t.Fatalf("fetch calls %d, text %v", len(tt.Calls("data.fetch")), stateOf(t, run, "text"))
	}
}

// The steps a fork keeps were spent by the run it forks: they do not
// count against the fork's steps budget (nor, summed, the user's day).
func TestForkKeptStepsAreNotSpentAgain(t *testing.T) {
	_, e, src := failedFork(t, contracts.Budgets{Run: contracts.Budget{Steps: 3}})
	if contracts.CodeOf(src.Error) == contracts.CodeBudgetExceeded {
		t.Fatalf("source stopped by its budget: %v", src.Error)
	}
	run, err := e.Fork(context.Background(), ForkRequest{RunID: src.ID, FromAction: "format"})
	wantStatus(t, run, err, contracts.RunCompleted) // format and publish: 2 steps of its own
}

// A run still running is not forked: what it is doing now (a call in
// flight, or one its dead process left unrecorded, which resuming it
// re-issues under its key) would run again in the fork under another key,
// so a side effect could happen twice. Once it stops it forks.
func TestForkRefusesARunStillRunning(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	obj := `{"type":"object","properties":{"v":{}}}`
	tt := newTools(t,
		tool("data.slow", contracts.RiskWrite, obj, obj, map[string]string{"v": "$.v"}, func(context.Context, sdk.Call) (any, error) {
			close(entered)
			<-release
			return map[string]any{"v": 1}, nil
		}),
		tool("data.next", contracts.RiskRead, obj, obj, map[string]string{"w": "$.v"}, returns(map[string]any{"v": 2})))
	store := newStore()
	e := New(Config{}, Deps{Tools: tt, Store: store})
	ctx := context.Background()
	plan := mustPlan(t, `{"version":"1.0","goal":"slow then next","timezone":"UTC","actions":[
	 {"id":"slow","tool":"data.slow","intent":"write","requires":[],"produces":["v"],"inputs":{}},
	 {"id":"next","tool":"data.next","intent":"read","requires":["v"],"produces":["w"],"input_bindings":{"v":"v"}}]}`)
	done := make(chan *contracts.Run, 1)
	go func() {
		run, err := e.Run(ctx, Request{Plan: plan, UserID: "ada"})
		if err != nil {
			t.Error(err)
		}
		done <- run
	}()
	<-entered
	runs, err := store.List(ctx, memory.Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	id := runs[0].ID
	if _, err := e.Fork(ctx, ForkRequest{RunID: id, FromAction: "next"}); contracts.CodeOf(err) != contracts.CodeInvalidInput {
		t.Fatalf("fork of a running run: %v", err)
	}
	if all, _ := store.List(ctx, memory.Filter{}); len(all) != 1 {
		t.Fatalf("a refused fork created a run: %d runs", len(all))
	}
	close(release)
	src := <-done
	wantStatus(t, src, nil, contracts.RunCompleted)
	run, err := e.Fork(ctx, ForkRequest{RunID: id, FromAction: "next"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if n := len(tt.Calls("data.slow")); n != 1 {
		t.Fatalf("slow called %d times", n)
	}
}

// A step a person skipped before the fork point stays skipped in the fork:
// the fork does not undo the decision, even for a fork whose policy
// confirmations are approved (ordo runs fork --yes).
func TestForkKeepsASkippedStepSkipped(t *testing.T) {
	var fixed atomic.Bool
	fixed.Store(true)
	tt := forkTools(t, &fixed)
	store := newStore()
	cfg := Config{Policy: PolicyConfig{ConfirmTools: []string{"data.fetch"}}}
	e := New(cfg, Deps{Tools: tt, Store: store})
	ctx := context.Background()
	plan := `{"version":"1.0","goal":"fetch, side, format","timezone":"UTC","actions":[
	 {"id":"fetch","tool":"data.fetch","intent":"read","requires":[],"produces":["rows"],"inputs":{"q":"sales"}},
	 {"id":"side","tool":"data.fetch","intent":"read","requires":[],"depends_on":["fetch"],"produces":["other"],"inputs":{"q":"costs"}},
	 {"id":"format","tool":"data.format","intent":"transform","requires":["rows"],"depends_on":["side"],"produces":["text"],"input_bindings":{"rows":"rows"}}]}`
	run, err := e.Run(ctx, Request{Plan: mustPlan(t, plan), UserID: "ada"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	run, err = e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "ada"}) // fetch
	wantStatus(t, run, err, contracts.RunInterrupted)
	run, err = e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionSkip, By: "ada"}) // side
	wantStatus(t, run, err, contracts.RunCompleted)
	fetches := len(tt.Calls("data.fetch"))

	fork, err := e.Fork(ctx, ForkRequest{RunID: run.ID, FromAction: "format", AutoApprovePolicy: true})
	wantStatus(t, fork, err, contracts.RunCompleted)
	if n := len(tt.Calls("data.fetch")); n != fetches {
		t.Fatalf("the fork ran the skipped step: fetch calls %d -> %d", fetches, n)
	}
	side := slices.DeleteFunc(slices.Clone(fork.Steps), func(s contracts.StepRecord) bool { return s.ActionID != "side" })
	if len(side) != 1 || side[0].Status != contracts.StepSkipped {
		t.Fatalf("side in the fork: %+v", side)
	}
}
