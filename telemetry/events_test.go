package telemetry_test

import (
	"context"
	"testing"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// TestCancelledRunsFinish: a run cancelled for good reached a final status
// (contracts.RunStatus.Final), so ordo_runs_finished_total counts it, as
// "cancelled"; it was counted nowhere, and started minus finished grew
// with every cancel. A run stopped at a step boundary (Ctrl-C; it goes
// back to ready and resumes) has not finished.
func TestCancelledRunsFinish(t *testing.T) {
	e, m := stepEngine(t, 1)
	ctx := context.Background()
	if run, err := e.Run(ctx, agent.Request{Plan: chain(t, 1)}); err != nil || run.Status != contracts.RunCompleted {
		t.Fatalf("run: %v %+v", err, run)
	}
	planned, err := e.Plan(ctx, agent.Request{Plan: chain(t, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := e.Cancel(ctx, planned.ID, "ops"); err != nil || run.Status != contracts.RunCancelled {
		t.Fatalf("cancel: %v %+v", err, run)
	}
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	if run, err := e.Run(stopped, agent.Request{Plan: chain(t, 1)}); err != nil || run.Status != contracts.RunReady {
		t.Fatalf("a run stopped at its first step boundary: %v %+v", err, run)
	}
	got := counters(t, m, "ordo_runs_finished_total", "outcome")
	if got["completed"] != 1 || got["cancelled"] != 1 || len(got) != 2 {
		t.Errorf("runs finished by outcome: %v, want completed 1, cancelled 1", got)
	}
}
