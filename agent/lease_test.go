package agent

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/postgres"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// leasingStore is a store with leases, as both interfaces.
type leasingStore interface {
	memory.Checkpointer
	memory.Leaser
}

// dyingStore is one server's connection to the shared store; once dead,
// lease renewals fail like a server that stalled or lost its network.
type dyingStore struct {
	leasingStore
	dead atomic.Bool
}

func (d *dyingStore) Renew(ctx context.Context, runID, owner string, ttl time.Duration) error {
	if d.dead.Load() {
		return contracts.Errorf(contracts.CodeStore, "connection lost")
	}
	return d.leasingStore.Renew(ctx, runID, owner, ttl)
}

// Two servers on one store: A drives a run and holds its lease, B is
// refused with CodeLeaseHeld and claims nothing; once A stops renewing, B
// claims the run and finishes it, re-issuing A's in-flight call with the
// same key, and A, whose lease is gone, writes nothing more.
func TestLeaseHandoffBetweenServers(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		st := memory.NewMemStore()
		leaseHandoff(t, st, st, 300*time.Millisecond)
	})
	t.Run("postgres", func(t *testing.T) {
		c := pgEnv(t)
		a, b := c.openStore().(*postgres.Store), c.openStore().(*postgres.Store)
		leaseHandoff(t, a, b, time.Second)
	})
}

func leaseHandoff(t *testing.T, storeA, storeB leasingStore, ttl time.Duration) {
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	notes := notesTool()
	notes.Handler = func(_ context.Context, c sdk.Call) (any, error) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(entered)
			<-release // A's call hangs while A "dies"
		}
		return map[string]any{"id": "p1", "url": "https://notes.local/p1"}, nil
	}
	tt := newTools(t, notes, chatTool())
	dying := &dyingStore{leasingStore: storeA}
	a := New(Config{LeaseTTL: ttl, Owner: "server-a"}, Deps{Tools: tt, Store: dying})
	b := New(Config{LeaseTTL: ttl, Owner: "server-b"}, Deps{Tools: tt, Store: storeB})
	aDone := make(chan error, 1)
	go func() {
		_, err := a.Run(ctx, Request{Plan: mustPlan(t, notesChatPlan)})
		aDone <- err
	}()
	<-entered
	runs, err := storeB.List(ctx, memory.Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	id := runs[0].ID
	if _, err := b.Resume(ctx, id, contracts.Decision{}); contracts.CodeOf(err) != contracts.CodeLeaseHeld {
		t.Fatalf("B resumed a run A drives: %v", err)
	}
	if _, err := b.Execute(ctx, id); contracts.CodeOf(err) != contracts.CodeLeaseHeld {
		t.Fatalf("B executed a run A drives: %v", err)
	}
	if ids, err := b.Recover(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("B claimed %v from a live server (%v)", ids, err)
	}

	dying.dead.Store(true)
	var ids []string
	testwait.Until(t, 30*time.Second, "B to claim the run of the dead server", func() bool {
		if ids, err = b.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		return len(ids) > 0
	})
	run, err := b.Get(ctx, id)
	if err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("claimed %v, want [%s] (%v)", ids, id, err)
	}
	wantStatus(t, run, nil, contracts.RunCompleted)

	// A's renewer notices within a third of the ttl.
	testwait.Until(t, 30*time.Second, "A to see its lease taken", func() bool { return !a.holds(id) })
	close(release)
	if err := <-aDone; contracts.CodeOf(err) != contracts.CodeLeaseHeld {
		t.Fatalf("A, whose lease was taken, ended with %v; want CodeLeaseHeld", err)
	}
	after, err := b.Get(ctx, id)
	if err != nil || after.Seq != run.Seq {
		t.Fatalf("A wrote after losing the lease: seq %d -> %d (%v)", run.Seq, after.Seq, err)
	}
	calls := tt.Calls("notes.create_page")
	if len(calls) != 2 || calls[0].Key != calls[1].Key || len(tt.Calls("chat.post_message")) != 1 {
		t.Fatalf("calls %+v", tt.Calls(""))
	}
	// B released the finished run's lease: anyone may take it.
	if err := storeB.Acquire(ctx, id, "server-c", ttl); err != nil {
		t.Fatalf("lease not released: %v", err)
	}
}

// holds reports whether the engine still holds runID's lease.
func (e *Engine) holds(runID string) bool {
	e.leaseMu.Lock()
	defer e.leaseMu.Unlock()
	_, ok := e.leases[runID]
	return ok
}

// Recover leaves an interrupted run to its person (releasing the dead
// server's lease) and fails closed a run orphaned while planning; a run
// that stops at an interrupt releases its lease at once.
func TestRecoverInterruptedAndOrphanedRuns(t *testing.T) {
	ctx := context.Background()
	tt := newTools(t, notesTool(), chatTool())
	st := memory.NewMemStore()
	e := New(Config{HITL: hitlOn, LeaseTTL: time.Second}, Deps{Tools: tt, Store: st})
	waiting, err := e.Run(ctx, Request{Plan: mustPlan(t, notesChatPlan)})
	wantStatus(t, waiting, err, contracts.RunInterrupted)
	if err := st.Acquire(ctx, waiting.ID, "dead-server", time.Millisecond); err != nil {
		t.Fatalf("the interrupted run's lease was not released: %v", err)
	}
	old := time.Now().Add(-time.Hour).UTC()
	orphan := &contracts.Run{FormatVersion: contracts.RunFormatVersion, ID: "run_orphan", Goal: "g", Status: contracts.RunPending,
		Seq: 1, CreatedAt: old, UpdatedAt: old}
	if err := st.Save(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // the dead server's lease expires
	ids, err := e.Recover(ctx)
	want := []string{"run_orphan", waiting.ID}
	slices.Sort(ids)
	slices.Sort(want)
	if err != nil || !slices.Equal(ids, want) {
		t.Fatalf("recovered %v (%v)", ids, err)
	}
	got, err := e.Get(ctx, waiting.ID)
	wantStatus(t, got, err, contracts.RunInterrupted)
	if err := st.Acquire(ctx, waiting.ID, "approver", time.Second); err != nil {
		t.Fatalf("recovery kept the interrupted run's lease: %v", err)
	}
	got, err = e.Get(ctx, "run_orphan")
	wantStatus(t, got, err, contracts.RunFailed)
	if got.Error.Code != contracts.CodePlanFailed || len(tt.Calls("")) != 0 {
		t.Fatalf("orphan error %+v, calls %v", got.Error, tt.Calls(""))
	}
}

// frozenStore is one server's store whose lease renewals never reach the
// database, while the server believes them made: a server paused
// (SIGSTOP) past its lease and resumed, before its renewer has run again.
// Its lease lapses and another server takes the run.
type frozenStore struct {
	leasingStore
	memory.LeaseSaver
}

func (f *frozenStore) Renew(context.Context, string, string, time.Duration) error { return nil }

// A server paused past its lease resumes while another server, which
// took the run over, is re-issuing its in-flight call: the paused
// server's call returns before its renewer learns the lease is gone. The
// new owner checkpointed the run before re-issuing the call, so the paused
// server's next checkpoint is a stale sequence and refused: it calls
// nothing more and writes nothing, and the new owner finishes the run,
// every effect once.
func TestPausedServerWritesNothingAfterTakeover(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		st := memory.NewMemStore()
		pausedTakeover(t, st, st, 300*time.Millisecond)
	})
	t.Run("postgres", func(t *testing.T) {
		c := pgEnv(t)
		a, b := c.openStore().(*postgres.Store), c.openStore().(*postgres.Store)
		pausedTakeover(t, a, b, time.Second)
	})
}

func pausedTakeover(t *testing.T, storeA, storeB interface {
	leasingStore
	memory.LeaseSaver
}, ttl time.Duration) {
	ctx := context.Background()
	aEntered, releaseA := make(chan struct{}), make(chan struct{})
	bEntered, releaseB := make(chan struct{}), make(chan struct{})
	var n atomic.Int32
	notes := notesTool()
	notes.Handler = func(_ context.Context, c sdk.Call) (any, error) {
		switch n.Add(1) {
		case 1: // A's call, in flight while A is paused
			close(aEntered)
			<-releaseA
		case 2: // B's re-issue of it
			close(bEntered)
			<-releaseB
		}
		return map[string]any{"id": "p1", "url": "https://notes.local/p1"}, nil
	}
	tt := newTools(t, notes, chatTool())
	paused := &frozenStore{leasingStore: storeA, LeaseSaver: storeA}
	a := New(Config{LeaseTTL: ttl, Owner: "server-a"}, Deps{Tools: tt, Store: paused})
	b := New(Config{LeaseTTL: ttl, Owner: "server-b"}, Deps{Tools: tt, Store: storeB})
	aDone := make(chan error, 1)
	go func() {
		_, err := a.Run(ctx, Request{Plan: mustPlan(t, notesChatPlan)})
		aDone <- err
	}()
	<-aEntered
	bDone := make(chan []string, 1)
	go func() {
		for {
			ids, err := b.Recover(ctx)
			if err != nil {
				t.Error(err)
			}
			if len(ids) > 0 || err != nil {
				bDone <- ids
				return
			}
			time.Sleep(ttl / 10)
		}
	}()
	<-bEntered // B took the run over and re-issues A's call
	close(releaseA)
	if err := <-aDone; contracts.CodeOf(err) != contracts.CodeSequenceConflict {
		t.Errorf("A, resumed after B took its run, ended with %v; want CodeSequenceConflict", err)
	}
	if calls := tt.Calls("chat.post_message"); len(calls) != 0 {
		t.Errorf("A called on after losing its lease: %+v", calls)
	}
	close(releaseB)
	ids := <-bDone
	if len(ids) != 1 {
		t.Fatalf("B recovered %v", ids)
	}
	run, err := b.Get(ctx, ids[0])
	wantStatus(t, run, err, contracts.RunCompleted)
	calls := tt.Calls("notes.create_page")
	if len(calls) != 2 || calls[0].Key != calls[1].Key || len(tt.Calls("chat.post_message")) != 1 {
		t.Fatalf("calls %+v", tt.Calls(""))
	}
}
