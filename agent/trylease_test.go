package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// TryLease says who holds a run and for how long, and leaves a free lease
// free: `ordo runs resume` looks with it before asking a person anything.
func TestTryLease(t *testing.T) {
	ctx := context.Background()
	st := memory.NewMemStore()
	e := New(Config{HITL: hitlOn, LeaseTTL: time.Second}, Deps{Tools: newTools(t, notesTool(), chatTool()), Store: st})
	run, err := e.Run(ctx, Request{Plan: mustPlan(t, notesChatPlan)})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if err := st.Acquire(ctx, run.ID, "server-b", time.Minute); err != nil {
		t.Fatal(err)
	}
	held := contracts.AsError(e.TryLease(ctx, run.ID))
	if held == nil || held.Code != contracts.CodeLeaseHeld || held.Details["holder"] != "server-b" ||
		!strings.Contains(held.Message, `held by "server-b" for 60 more seconds`) {
		t.Fatalf("TryLease on a held run: %+v", held)
	}
	if err := st.Release(ctx, run.ID, "server-b"); err != nil {
		t.Fatal(err)
	}
	if err := e.TryLease(ctx, run.ID); err != nil {
		t.Fatalf("TryLease on a free run: %v", err)
	}
	if err := st.Acquire(ctx, run.ID, "server-c", time.Minute); err != nil {
		t.Fatalf("TryLease kept the lease: %v", err)
	}
	if err := e.TryLease(ctx, "run_ghost"); contracts.CodeOf(err) != contracts.CodeRunNotFound {
		t.Fatalf("TryLease on an unknown run: %v", err)
	}
}
