package agent

import (
	"context"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// dying is a store whose process "dies" after its first n saves: every
// later save fails, as if nothing after them had happened.
type dying struct {
	memory.Checkpointer
	left int
}

func (d *dying) Save(ctx context.Context, run *contracts.Run) error {
	if d.left == 0 {
		return contracts.Errorf(contracts.CodeStore, "the process died")
	}
	d.left--
	return d.Checkpointer.Save(ctx, run)
}

// The first checkpoint of a run with a caller's plan is written before
// its first call and already holds the checked plan and its policy, so a
// process that dies right after that call leaves a run another engine
// continues (Execute, or Resume with an empty decision): the call in
// flight is re-issued under the same idempotency key, every other tool is
// called once.
func TestFirstCheckpointHoldsCallerPlan(t *testing.T) {
	for _, via := range []string{"execute", "resume"} {
		t.Run(via, func(t *testing.T) {
			st := newStore()
			tt := newTools(t, notesTool(), chatTool())
			plan := mustPlan(t, `{"version":"1.0","goal":"write notes and share the link","timezone":"UTC","actions":[
			 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_url"],"inputs":{"title":"Notes"}},
			 {"id":"a2","tool":"chat.post_message","intent":"notify","requires":["page_url"],"produces":["message_ts"],"inputs":{"channel":"#ops"},"input_bindings":{"text":"page_url"}}]}`)
			// memory.Checkpointer only: no leases to wait out in this test.
			_, err := New(Config{}, Deps{Tools: tt, Store: &dying{Checkpointer: st, left: 1}}).Run(context.Background(),
				Request{Plan: plan, Options: contracts.RunOptions{AutoApprove: true}})
			if contracts.CodeOf(err) != contracts.CodeStore {
				t.Fatalf("the dying process: %v", err)
			}
			if n := len(tt.Calls("")); n != 1 {
				t.Fatalf("the dying process made %d calls, want the first only", n)
			}
			sums, _ := st.List(context.Background(), memory.Filter{})
			if len(sums) != 1 || sums[0].Seq != 1 {
				t.Fatalf("stored runs %+v", sums)
			}
			first, _ := st.Load(context.Background(), sums[0].ID)
			if first.Status != contracts.RunRunning || len(first.Steps) != 0 || len(first.Plans) != 1 || first.Plans[0].Source != "caller" ||
				first.Policy["a2"].Decision == "" || len(first.Plans[0].Levels) != 2 {
				t.Fatalf("first checkpoint: %s, %d steps, plans %+v, policy %+v", first.Status, len(first.Steps), first.Plans, first.Policy)
			}
			e := New(Config{}, Deps{Tools: tt, Store: checkpointerOnly{st}})
			var run *contracts.Run
			if via == "execute" {
				run, err = e.Execute(context.Background(), first.ID)
			} else {
				run, err = e.Resume(context.Background(), first.ID, contracts.Decision{})
			}
			wantStatus(t, run, err, contracts.RunCompleted)
			pages, posts := tt.Calls("notes.create_page"), tt.Calls("chat.post_message")
			if len(pages) != 2 || pages[0].Key != pages[1].Key || len(posts) != 1 {
				t.Fatalf("calls: pages %+v, %d posts", pages, len(posts))
			}
			if _, err := e.Resume(context.Background(), first.ID, contracts.Decision{Kind: contracts.DecisionApprove}); contracts.CodeOf(err) != contracts.CodeRunAlreadyFinished {
				t.Fatalf("resume a finished run: %v", err)
			}
		})
	}
}

// A run an older build left pending with its checked plan (it wrote a
// first checkpoint before execution) still asks for plan approval where
// configured when continued, and a decision offered to a run that waits
// for none is refused.
func TestPlannedRunAsksForApprovalWhenContinued(t *testing.T) {
	st := newStore()
	tt := newTools(t, notesTool())
	plan := mustPlan(t, `{"version":"1.0","goal":"write notes","timezone":"UTC","actions":[
	 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_url"],"inputs":{"title":"Notes"}}]}`)
	cfg := DefaultConfig()
	planned, err := New(Config{}, Deps{Tools: tt, Store: checkpointerOnly{st}}).Plan(context.Background(), Request{Plan: plan})
	wantStatus(t, planned, err, contracts.RunReady)
	old, err := st.Load(context.Background(), planned.ID)
	if err != nil {
		t.Fatal(err)
	}
	old.Status, old.Seq = contracts.RunPending, old.Seq+1
	if err := st.Save(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	e := New(cfg, Deps{Tools: tt, Store: checkpointerOnly{st}})
	if _, err := e.Resume(context.Background(), old.ID, contracts.Decision{Kind: contracts.DecisionApprove}); contracts.CodeOf(err) != contracts.CodeRunNotInterrupted {
		t.Fatalf("a decision for a pending run: %v", err)
	}
	run, err := e.Execute(context.Background(), old.ID)
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Kind != contracts.InterruptPlanApproval || len(tt.Calls("")) != 0 {
		t.Fatalf("interrupt %+v, %d calls", run.Interrupt, len(tt.Calls("")))
	}
}

// checkpointerOnly hides the store's leases.
type checkpointerOnly struct{ memory.Checkpointer }
