package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Without a model a step that still fails stops at step_failed (the
// default on_failure), and the person retries it with an edited payload,
// skips it, or aborts; a decision that does not fit or a bad payload is
// refused with the run unchanged.
func TestStepFailedRetrySkipAbort(t *testing.T) {
	var fixed atomic.Bool
	tt := forkTools(t, &fixed)
	store := newStore()
	ctx := context.Background()
	run, err := New(Config{}, Deps{Tools: tt, Store: store}).Run(ctx, Request{Plan: mustPlan(t, forkPlan), UserID: "ada"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	in := run.Interrupt
	if in.Kind != contracts.InterruptStepFailed || in.ActionID != "format" || in.Tool != "data.format" || in.Error.Code != contracts.CodeToolFailed {
		t.Fatalf("interrupt %+v", in)
	}
	e := fresh(Config{}, tt, store)
	for _, d := range []contracts.Decision{
		{Kind: contracts.DecisionContinue},
		{Kind: contracts.DecisionReplan},                                // no model to re-plan
		{Kind: contracts.DecisionRetry, Payload: json.RawMessage(`{}`)}, // breaks the input schema
	} {
		if _, err := e.Resume(ctx, run.ID, d); contracts.CodeOf(err) == 0 {
			t.Fatalf("%s %s accepted", d.Kind, d.Payload)
		}
	}
	if again, _ := store.Load(ctx, run.ID); again.Seq != run.Seq || again.Interrupt.Kind != contracts.InterruptStepFailed {
		t.Fatalf("a refused decision changed the run: seq %d -> %d", run.Seq, again.Seq)
	}
	fixed.Store(true)
	run, err = e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionRetry, Payload: json.RawMessage(`{"rows":"edited"}`), By: "ada"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if got := stateOf(t, run, "url"); got != "https://x/table: edited" || len(tt.Calls("data.fetch")) != 2 {
		t.Fatalf("url %v, fetch calls %d", got, len(tt.Calls("data.fetch")))
	}

	// skip: the dependent that needs the skipped step's output stops at
	// its own step_failed; abort fails the run with its error.
	fixed.Store(false)
	run, err = e.Run(ctx, Request{Plan: mustPlan(t, forkPlan), UserID: "ada"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	run, err = e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionSkip, By: "ada"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if in := run.Interrupt; in.Kind != contracts.InterruptStepFailed || in.ActionID != "publish" || in.Error.Code != contracts.CodeUnsatisfiedRequires {
		t.Fatalf("after skip: %+v", in)
	}
	run, err = e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionAbort, By: "ada"})
	wantStatus(t, run, err, contracts.RunFailed)
	if run.Error.Code != contracts.CodeUnsatisfiedRequires || len(tt.Calls("data.publish")) != 1 {
		t.Fatalf("abort: %+v, publish calls %d", run.Error, len(tt.Calls("data.publish")))
	}
}

// on_failure fail ends the run; Retry forks it from the step that failed,
// taking over the steps before it, and refuses a run that did not fail.
func TestRetryFailedRunForksFromTheFailedStep(t *testing.T) {
	tt, e, src := failedFork(t, contracts.Budgets{})
	ctx := context.Background()
	run, err := e.Retry(ctx, ForkRequest{RunID: src.ID})
	wantStatus(t, run, err, contracts.RunCompleted)
	if len(tt.Calls("data.fetch")) != 2 || len(tt.Calls("data.format")) != 2 || run.Plans[0].Source != "fork" {
		t.Fatalf("fetch %d format %d calls, source %s", len(tt.Calls("data.fetch")), len(tt.Calls("data.format")), run.Plans[0].Source)
	}
	if _, err := e.Retry(ctx, ForkRequest{RunID: run.ID}); contracts.CodeOf(err) != contracts.CodeInvalidInput {
		t.Fatalf("retry of a completed run: %v", err)
	}
}

// A pause asked by another engine sharing the store (another process)
// reaches the driver through the store; the run stops at the next step
// boundary, and an edit of the whole plan keeps the finished step.
func TestPauseFromAnotherEngineAndEdit(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	obj := func(prop string) string {
		return `{"type":"object","required":["` + prop + `"],"properties":{"` + prop + `":{}}}`
	}
	tt := newTools(t,
		tool("slow.step", contracts.RiskRead, obj("q"), obj("out"), map[string]string{"first": "$.out"},
			func(_ context.Context, c sdk.Call) (any, error) {
				entered <- struct{}{}
				<-release
				return map[string]any{"out": c.Payload["q"]}, nil
			}),
		tool("fast.step", contracts.RiskRead, obj("q"), obj("out"), map[string]string{"second": "$.out"},
			func(_ context.Context, c sdk.Call) (any, error) { return map[string]any{"out": c.Payload["q"]}, nil }),
	)
	plan := `{"version":"1.0","goal":"two steps","timezone":"UTC","actions":[
	 {"id":"one","tool":"slow.step","intent":"read","requires":[],"produces":["first"],"inputs":{"q":"a"}},
	 {"id":"two","tool":"fast.step","intent":"read","requires":["first"],"produces":["second"],"inputs":{"q":"QUERY"}}]}`
	store := newStore()
	requested := make(chan Event, 4)
	driver := New(Config{}, Deps{Tools: tt, Store: store, Events: func(ev Event) {
		if ev.Kind == EventRequested {
			requested <- ev
		}
	}})
	other := fresh(Config{}, tt, store)
	ctx := context.Background()
	type result struct {
		run *contracts.Run
		err error
	}
	done := make(chan result)
	go func() {
		run, err := driver.Run(ctx, Request{Plan: mustPlan(t, jsonReplace(plan, "QUERY", "b")), UserID: "ada"})
		done <- result{run, err}
	}()
	<-entered
	runs, err := store.List(ctx, memory.Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v %v", runs, err)
	}
	id := runs[0].ID
	run, err := other.Pause(ctx, id, "bob")
	if err != nil || run.Status != contracts.RunRunning {
		t.Fatalf("pause of a run another engine drives: %v %v", run, err)
	}
	if ev := <-requested; ev.RunID != id {
		t.Fatalf("request event %+v", ev)
	}
	close(release)
	r := <-done
	wantStatus(t, r.run, r.err, contracts.RunInterrupted)
	if in := r.run.Interrupt; in.Kind != contracts.InterruptPaused || len(tt.Calls("fast.step")) != 0 {
		t.Fatalf("interrupt %+v, fast calls %d", in, len(tt.Calls("fast.step")))
	}
	if reqs, _ := store.Requests(ctx, id); len(reqs) != 0 {
		t.Fatalf("request left behind: %v", reqs)
	}
	if _, err := other.Resume(ctx, id, contracts.Decision{Kind: contracts.DecisionRetry}); contracts.CodeOf(err) != contracts.CodeInvalidDecision {
		t.Fatalf("retry at a pause: %v", err)
	}
	onlyDone := mustPlan(t, `{"version":"1.0","goal":"two steps","timezone":"UTC","actions":[
	 {"id":"one","tool":"slow.step","intent":"read","requires":[],"produces":["first"],"inputs":{"q":"a"}}]}`)
	if _, err := other.Resume(ctx, id, contracts.Decision{Kind: contracts.DecisionEdit, Plan: onlyDone}); contracts.CodeOf(err) != contracts.CodeInvalidDecision {
		t.Fatalf("an edit with nothing left: %v", err)
	}
	run, err = other.Resume(ctx, id, contracts.Decision{Kind: contracts.DecisionEdit, Plan: mustPlan(t, jsonReplace(plan, "QUERY", "edited")), By: "bob"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if got := stateOf(t, run, "second"); got != "edited" || len(tt.Calls("slow.step")) != 1 || len(run.Plans) != 2 || run.Plans[1].Source != "edit" {
		t.Fatalf("second %v, slow calls %d, plans %d", got, len(tt.Calls("slow.step")), len(run.Plans))
	}
}

// A run nobody drives pauses at once; continue runs it on; cancel ends a
// run for good, and a finished run takes no request.
func TestPauseAtRestContinueAndCancel(t *testing.T) {
	var fixed atomic.Bool
	fixed.Store(true)
	tt := forkTools(t, &fixed)
	store := newStore()
	e := New(Config{}, Deps{Tools: tt, Store: store})
	ctx := context.Background()
	run, err := e.Plan(ctx, Request{Plan: mustPlan(t, forkPlan), UserID: "ada"})
	wantStatus(t, run, err, contracts.RunReady)
	run, err = fresh(Config{}, tt, store).Pause(ctx, run.ID, "ada")
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Kind != contracts.InterruptPaused {
		t.Fatalf("interrupt %+v", run.Interrupt)
	}
	if _, err := e.Execute(ctx, run.ID); err == nil {
		t.Fatal("a paused run executed without a decision")
	}
	run, err = e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionContinue, By: "ada"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if _, err := e.Cancel(ctx, run.ID, "ada"); contracts.CodeOf(err) != contracts.CodeRunAlreadyFinished {
		t.Fatalf("cancel of a completed run: %v", err)
	}

	run, err = e.Plan(ctx, Request{Plan: mustPlan(t, forkPlan), UserID: "ada"})
	wantStatus(t, run, err, contracts.RunReady)
	run, err = e.Pause(ctx, run.ID, "ada")
	wantStatus(t, run, err, contracts.RunInterrupted)
	run, err = e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionAbort, By: "ada"})
	wantStatus(t, run, err, contracts.RunCancelled)

	run, err = e.Plan(ctx, Request{Plan: mustPlan(t, forkPlan), UserID: "ada"})
	wantStatus(t, run, err, contracts.RunReady)
	run, err = fresh(Config{}, tt, store).Cancel(ctx, run.ID, "ada")
	wantStatus(t, run, err, contracts.RunCancelled)
	if run.Error.Code != contracts.CodeCancelled || len(tt.Calls("data.fetch")) != 2 {
		t.Fatalf("cancel: %+v, fetch calls %d", run.Error, len(tt.Calls("data.fetch")))
	}
	fork, err := e.Retry(ctx, ForkRequest{RunID: run.ID})
	wantStatus(t, fork, err, contracts.RunCompleted)
}

func jsonReplace(s, old, new string) string {
	b, _ := json.Marshal(new)
	return strings.Replace(s, `"`+old+`"`, string(b), 1)
}

// A run that failed because a person skipped a failed step (its dependent
// then lacked the key) is retried from the skipped step: the retry runs it
// again once its cause is fixed, not the dependent alone, which would lack
// the key again.
func TestRetryAfterASkipRunsTheSkippedStep(t *testing.T) {
	var fixed atomic.Bool
	tt := forkTools(t, &fixed)
	e := New(Config{OnFailure: contracts.OnFailureAsk}, Deps{Tools: tt, Store: newStore()})
	ctx := context.Background()
	run, err := e.Run(ctx, Request{Plan: mustPlan(t, forkPlan), UserID: "ada"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	run, err = e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionSkip, By: "ada"}) // format
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.ActionID != "publish" || run.Interrupt.Error == nil || run.Interrupt.Error.Code != contracts.CodeUnsatisfiedRequires {
		t.Fatalf("after the skip: %+v", run.Interrupt)
	}
	src, err := e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionAbort, By: "ada"})
	wantStatus(t, src, err, contracts.RunFailed)

	fixed.Store(true)
	fork, err := e.Retry(ctx, ForkRequest{RunID: src.ID})
	wantStatus(t, fork, err, contracts.RunCompleted)
	if got := stateOf(t, fork, "url"); got != "https://x/table: rows of sales" || len(tt.Calls("data.fetch")) != 2 {
		t.Fatalf("retry: url %v, fetch calls %d", got, len(tt.Calls("data.fetch")))
	}
}
