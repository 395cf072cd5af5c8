package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/memory"
)

// expire is a lease short enough to be over by the time a test looks again.
const expire = time.Millisecond

func leaser(t *testing.T, s memory.Checkpointer) memory.Leaser {
	l, ok := s.(memory.Leaser)
	if !ok {
		t.Skip("store does not implement memory.Leaser")
	}
	return l
}

// waitExpired sleeps past every lease of length expire taken so far.
func waitExpired() { time.Sleep(20 * expire) }

func testLeases(t *testing.T, s memory.Checkpointer) {
	l := leaser(t, s)
	ctx := context.Background()
	const ttl = time.Minute
	testerr.Code(t, l.Acquire(ctx, "ghost", "A", ttl), contracts.CodeRunNotFound)
	mustSave(t, s, SimpleRun("r", "u", contracts.RunRunning, 1, Base))

	for _, err := range []error{
		l.Acquire(ctx, "", "A", ttl), l.Acquire(ctx, "r", "", ttl), l.Acquire(ctx, "r", "A", 0),
		l.Renew(ctx, "r", "A", -time.Second), l.Release(ctx, "r", ""),
	} {
		testerr.Code(t, err, contracts.CodeInvalidInput)
	}
	_, err := l.ClaimExpired(ctx, "A", ttl, 0)
	testerr.Code(t, err, contracts.CodeInvalidInput)

	testerr.Code(t, l.Renew(ctx, "r", "A", ttl), contracts.CodeLeaseHeld) // never acquired
	must(t, l.Acquire(ctx, "r", "A", ttl))
	must(t, l.Acquire(ctx, "r", "A", ttl)) // re-entrant for its owner
	testerr.Code(t, l.Acquire(ctx, "r", "B", ttl), contracts.CodeLeaseHeld)
	// The refusal names the holder and how long its lease has left.
	held := contracts.AsError(l.Acquire(ctx, "r", "B", ttl))
	if left, _ := held.Details["expires_in_ms"].(int64); held.Details["holder"] != "A" || left <= 0 || left > ttl.Milliseconds() ||
		!strings.Contains(held.Message, `held by "A" for `) {
		t.Fatalf("refusal %+v", held)
	}
	must(t, l.Renew(ctx, "r", "A", ttl))
	testerr.Code(t, l.Renew(ctx, "r", "B", ttl), contracts.CodeLeaseHeld)
	must(t, l.Release(ctx, "r", "B")) // not B's: a no-op
	testerr.Code(t, l.Acquire(ctx, "r", "B", ttl), contracts.CodeLeaseHeld)
	must(t, l.Release(ctx, "r", "A"))
	testerr.Code(t, l.Renew(ctx, "r", "A", ttl), contracts.CodeLeaseHeld) // released
	must(t, l.Acquire(ctx, "r", "B", ttl))

	// An expired lease is free to take, and its old owner cannot renew it.
	must(t, l.Release(ctx, "r", "B"))
	must(t, l.Acquire(ctx, "r", "A", expire))
	waitExpired()
	testerr.Code(t, l.Renew(ctx, "r", "A", ttl), contracts.CodeLeaseHeld)
	must(t, l.Acquire(ctx, "r", "B", ttl))
	testerr.Code(t, l.Acquire(ctx, "r", "A", ttl), contracts.CodeLeaseHeld)

	// Leases do not touch the checkpoint.
	if got := mustLoad(t, s, "r"); got.Seq != 1 {
		t.Fatalf("seq %d after lease calls", got.Seq)
	}

	// ClaimExpired takes only unfinished runs whose holder let the lease lapse.
	for i, st := range []contracts.RunStatus{contracts.RunRunning, contracts.RunInterrupted, contracts.RunCompleted} {
		id := fmt.Sprintf("c%d", i)
		mustSave(t, s, SimpleRun(id, "u", st, 1, Base.Add(time.Duration(i)*time.Second)))
		must(t, l.Acquire(ctx, id, "dead", expire))
	}
	mustSave(t, s, SimpleRun("released", "u", contracts.RunRunning, 1, Base))
	must(t, l.Acquire(ctx, "released", "A", expire))
	must(t, l.Release(ctx, "released", "A"))
	mustSave(t, s, SimpleRun("never", "u", contracts.RunRunning, 1, Base))
	mustSave(t, s, SimpleRun("alive", "u", contracts.RunRunning, 1, Base))
	must(t, l.Acquire(ctx, "alive", "A", ttl))
	waitExpired()

	first, err := l.ClaimExpired(ctx, "C", ttl, 1)
	if err != nil || !slices.Equal(first, []string{"c0"}) {
		t.Fatalf("claim limit 1: %v %v (oldest first)", first, err)
	}
	rest, err := l.ClaimExpired(ctx, "C", ttl, 10)
	if err != nil || !slices.Equal(rest, []string{"c1"}) {
		t.Fatalf("claim rest: %v %v", rest, err)
	}
	testerr.Code(t, l.Acquire(ctx, "c1", "dead", ttl), contracts.CodeLeaseHeld)
	must(t, l.Renew(ctx, "c0", "C", ttl))
	if again, err := l.ClaimExpired(ctx, "D", ttl, 10); err != nil || len(again) != 0 {
		t.Fatalf("claimed live leases: %v %v", again, err)
	}
}

// testRestReleases: the Save that puts a run at rest (waiting for a person,
// or finished) lets its lease go; any other Save keeps it.
func testRestReleases(t *testing.T, s memory.Checkpointer) {
	l := leaser(t, s)
	ctx := context.Background()
	const ttl = time.Minute
	for _, st := range []contracts.RunStatus{contracts.RunInterrupted, contracts.RunCompleted, contracts.RunFailed} {
		t.Run(string(st), func(t *testing.T) {
			run := SimpleRun("rest-"+string(st), "u", contracts.RunRunning, 1, Base)
			mustSave(t, s, run)
			must(t, l.Acquire(ctx, run.ID, "A", ttl))
			run.Seq, run.Status = 2, contracts.RunRunning
			mustSave(t, s, run)
			testerr.Code(t, l.Acquire(ctx, run.ID, "B", ttl), contracts.CodeLeaseHeld)
			run.Seq, run.Status = 3, st
			mustSave(t, s, run)
			testerr.Code(t, l.Renew(ctx, run.ID, "A", ttl), contracts.CodeLeaseHeld)
			must(t, l.Acquire(ctx, run.ID, "B", ttl))
		})
	}
}

// testSaveLeased: a store that creates a run with its lease (LeaseSaver)
// does both in one write, or neither.
func testSaveLeased(t *testing.T, s memory.Checkpointer) {
	ls, ok := s.(memory.LeaseSaver)
	if !ok {
		t.Skip("store does not implement memory.LeaseSaver")
	}
	l := leaser(t, s)
	ctx := context.Background()
	const ttl = time.Minute
	run := SimpleRun("leased", "u", contracts.RunRunning, 1, Base)
	for _, err := range []error{ls.SaveLeased(ctx, run, "", ttl), ls.SaveLeased(ctx, run, "A", 0),
		ls.SaveLeased(ctx, SimpleRun("leased", "u", contracts.RunRunning, 2, Base), "A", ttl)} {
		testerr.Code(t, err, contracts.CodeInvalidInput)
	}
	testerr.Code(t, l.Acquire(ctx, run.ID, "A", ttl), contracts.CodeRunNotFound) // nothing written
	must(t, ls.SaveLeased(ctx, run, "A", ttl))
	if got := mustLoad(t, s, run.ID); got.Seq != 1 || got.Status != contracts.RunRunning {
		t.Fatalf("leased save stored %+v", got)
	}
	testerr.Code(t, l.Acquire(ctx, run.ID, "B", ttl), contracts.CodeLeaseHeld)
	must(t, l.Renew(ctx, run.ID, "A", ttl))
	// A taken id is a sequence conflict, and its lease stays as it was.
	testerr.Code(t, ls.SaveLeased(ctx, SimpleRun(run.ID, "u", contracts.RunRunning, 1, Base), "B", ttl), contracts.CodeSequenceConflict)
	testerr.Code(t, l.Acquire(ctx, run.ID, "B", ttl), contracts.CodeLeaseHeld)
	// The lease expires like any other.
	must(t, ls.SaveLeased(ctx, SimpleRun("short", "u", contracts.RunRunning, 1, Base), "A", expire))
	waitExpired()
	if got, err := l.ClaimExpired(ctx, "C", ttl, 10); err != nil || !slices.Equal(got, []string{"short"}) {
		t.Fatalf("claimed %v %v", got, err)
	}
}

// testClaimRace has several claimers race over many expired runs; each run
// must go to exactly one of them.
func testClaimRace(t *testing.T, s memory.Checkpointer) {
	l := leaser(t, s)
	ctx := context.Background()
	const runs, claimers = 30, 4
	for i := range runs {
		id := fmt.Sprintf("e%02d", i)
		mustSave(t, s, SimpleRun(id, "u", contracts.RunRunning, 1, Base))
		must(t, l.Acquire(ctx, id, "dead", expire))
	}
	waitExpired()
	var mu sync.Mutex
	owner := map[string]string{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for c := range claimers {
		wg.Go(func() {
			name := fmt.Sprintf("claimer-%d", c)
			<-start
			for {
				got, err := l.ClaimExpired(ctx, name, time.Minute, 3)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, id := range got {
					if prev, dup := owner[id]; dup {
						t.Errorf("run %s claimed by %s and %s", id, prev, name)
					}
					owner[id] = name
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if len(owner) != runs {
		t.Fatalf("%d of %d runs claimed", len(owner), runs)
	}
	for id, name := range owner {
		must(t, l.Renew(ctx, id, name, time.Minute))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
