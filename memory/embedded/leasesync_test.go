package embedded

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/storetest"
)

// Lease changes alone commit without a sync of their own (see unsynced),
// and only they: a Save's batch is FULL, the writer connection is FULL
// again after every lease batch, and the lease is at once what a second
// store on the same file (as a second process) sees.
func TestLeaseChangesAloneSkipTheirSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ordo.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Save(ctx, storetest.SimpleRun("r1", "u", contracts.RunRunning, 1, storetest.Base)); err != nil {
		t.Fatal(err)
	}
	if n := s.wr.unsynced.Load(); n != 0 {
		t.Fatalf("a Save committed unsynced (%d)", n)
	}
	synchronous := func() int {
		t.Helper()
		var v int
		if err := s.w.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	other, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := s.Acquire(ctx, "r1", "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := other.Acquire(ctx, "r1", "b", time.Minute); contracts.CodeOf(err) != contracts.CodeLeaseHeld {
		t.Fatalf("the second store took a held lease: %v", err)
	}
	if err := s.Renew(ctx, "r1", "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "r1", "a"); err != nil {
		t.Fatal(err)
	}
	if n := s.wr.unsynced.Load(); n != 3 {
		t.Fatalf("%d of acquire, renew, release committed unsynced; want 3", n)
	}
	if v := synchronous(); v != 2 {
		t.Fatalf("writer connection left at synchronous=%d after lease changes, want 2 (FULL)", v)
	}
	if err := other.Acquire(ctx, "r1", "b", time.Minute); err != nil {
		t.Fatalf("the second store does not see the release: %v", err)
	}
	before := s.wr.unsynced.Load()
	if err := s.Save(ctx, storetest.SimpleRun("r1", "u", contracts.RunCompleted, 2, storetest.Base)); err != nil {
		t.Fatal(err)
	}
	if s.wr.unsynced.Load() != before || synchronous() != 2 {
		t.Fatalf("a Save committed unsynced, or left the connection so")
	}
}
