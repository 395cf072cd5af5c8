package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/memory"
)

// testDelete: Delete removes runs whatever their status, log and snapshot
// with them, all or none: a bad, unknown or (where the store leases)
// driven run among the ids refuses the whole call and changes nothing.
func testDelete(t *testing.T, s memory.Checkpointer) {
	ctx := context.Background()
	for _, bad := range [][]string{nil, {}, {"a", ""}} {
		testerr.Code(t, s.Delete(ctx, bad), contracts.CodeInvalidInput)
	}
	d := newDriver(t, s, SimpleRun("a", "u", contracts.RunRunning, 1, Base))
	for range 3 {
		d.addStep(false)
	}
	mustSave(t, s, SimpleRun("b", "u", contracts.RunInterrupted, 1, Base))
	mustSave(t, s, SimpleRun("c", "u", contracts.RunCompleted, 1, Base))
	kept := func(ids ...string) {
		t.Helper()
		for _, id := range ids {
			mustLoad(t, s, id)
		}
	}

	err := s.Delete(ctx, []string{"a", "ghost"})
	testerr.Code(t, err, contracts.CodeRunNotFound)
	if id := contracts.AsError(err).Details["run_id"]; id != "ghost" {
		t.Fatalf("refusal names run %v, want ghost", id)
	}
	kept("a", "b", "c")

	if l, ok := s.(memory.Leaser); ok {
		must(t, l.Acquire(ctx, "b", "A", time.Minute))
		err := s.Delete(ctx, []string{"a", "b"})
		testerr.Code(t, err, contracts.CodeLeaseHeld)
		if ce := contracts.AsError(err); ce.Details["run_id"] != "b" || ce.Details["holder"] != "A" {
			t.Fatalf("refusal %+v", ce)
		}
		kept("a", "b")
		// A lease that lapsed (its driver died) or was released is no
		// longer a driver: the run can go.
		must(t, l.Acquire(ctx, "b", "A", expire))
		waitExpired()
		must(t, l.Acquire(ctx, "c", "A", time.Minute))
		must(t, l.Release(ctx, "c", "A"))
	}

	must(t, s.Delete(ctx, []string{"a", "b", "a", "c"}))
	for _, id := range []string{"a", "b", "c"} {
		_, err := s.Load(ctx, id)
		testerr.Code(t, err, contracts.CodeRunNotFound)
		_, err = s.Log(ctx, id, 0, 0)
		testerr.Code(t, err, contracts.CodeRunNotFound)
	}
	list, err := s.List(ctx, memory.Filter{})
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("listed after delete: %v", ids(list))
	}
	testerr.Code(t, s.Delete(ctx, []string{"a"}), contracts.CodeRunNotFound)

	// A deleted id starts again from seq 1, with a log of its own.
	again := SimpleRun("a", "u", contracts.RunRunning, 1, Base.Add(time.Hour))
	mustSave(t, s, again)
	if got := seqs(mustLog(t, s, "a", 0, 0)); !slices.Equal(got, []int64{1}) {
		t.Fatalf("log of a reused id: %v", got)
	}
	requireSame(t, again, mustLoad(t, s, "a"))
}
