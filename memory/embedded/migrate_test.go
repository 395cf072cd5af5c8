package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/storetest"
)

// A file written by the build that kept one checkpoint per run (schema
// version 1) opens, migrates, and its runs load, show as one whole-run
// entry each, and carry on as deltas; a format 0 checkpoint is upgraded.
func TestMigrateCheckpointsToLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ordo.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, migrations[0]+"; PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	full := storetest.FullRun("v1", 3)
	data, err := memory.EncodeRun(full)
	if err != nil {
		t.Fatal(err)
	}
	insert := `INSERT INTO runs (id, user_id, goal, status, final, seq, format_version, created_at, updated_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	if _, err := db.ExecContext(ctx, insert, full.ID, full.UserID, full.Goal, full.Status, 0, full.Seq, 1,
		fmtTime(full.CreatedAt), fmtTime(full.UpdatedAt), data); err != nil {
		t.Fatal(err)
	}
	v0 := time.Date(2025, 11, 2, 9, 0, 5, 500_000_000, time.UTC)
	if _, err := db.ExecContext(ctx, insert, "run-v0", "ana", "email", "interrupted", 0, 4, 0,
		fmtTime(v0.Add(-time.Minute)), fmtTime(v0), storetest.RunV0); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var want []string // every migration after the first
	for v := 2; v <= len(migrations); v++ {
		want = append(want, fmt.Sprint("embedded schema ", v))
	}
	if !slices.Equal(s.Migrated(), want) {
		t.Fatalf("Migrated() = %q, want %q", s.Migrated(), want)
	}
	got, old := storetest.RequireMigrated(t, s, full)
	// Both carry on as deltas.
	storetest.RequireCarriesOn(t, s, got, old)
	var cols int
	if err := s.r.QueryRow(`SELECT count(*) FROM pragma_table_info('runs') WHERE name IN ('data', 'format_version')`).Scan(&cols); err != nil || cols != 0 {
		t.Fatalf("runs still has the checkpoint columns (%d) %v", cols, err)
	}
}

// One group commit holds Saves that succeed beside Saves refused for
// their sequence: the refusals change nothing and fail nothing else.
func TestGroupCommitIsolatesConflicts(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "ordo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const runs, rounds = 40, 5
	for i := range runs {
		if err := s.Save(ctx, storetest.SimpleRun(fmt.Sprint("g", i), "u", contracts.RunRunning, 1, storetest.Base)); err != nil {
			t.Fatal(err)
		}
	}
	before := s.wr.commits.Load()
	for round := range rounds {
		seq := int64(round + 2)
		var wg sync.WaitGroup
		errs := make([]error, 2*runs)
		for i := range 2 * runs {
			wg.Go(func() {
				// Even writers save the next sequence; odd ones a stale one.
				n := seq
				if i%2 == 1 {
					n = seq - 1
				}
				errs[i] = s.Save(ctx, storetest.SimpleRun(fmt.Sprint("g", i/2), "u", contracts.RunRunning, n, storetest.Base))
			})
		}
		wg.Wait()
		for i, err := range errs {
			if i%2 == 0 && err != nil {
				t.Fatalf("round %d writer %d: %v", round, i, err)
			}
			if i%2 == 1 && contracts.CodeOf(err) != contracts.CodeSequenceConflict {
				t.Fatalf("round %d stale writer %d: %v", round, i, err)
			}
		}
	}
	if n := s.wr.commits.Load() - before; n >= rounds*runs {
		t.Errorf("%d commits for %d saves: nothing was grouped", n, rounds*runs)
	} else {
		t.Logf("%d commits for %d successful saves", n, rounds*runs)
	}
	for i := range runs {
		got, err := s.Load(ctx, fmt.Sprint("g", i))
		if err != nil || got.Seq != rounds+1 {
			t.Fatalf("run %d: %v %v", i, got, err)
		}
		log, err := s.Log(ctx, got.ID, 0, 0)
		if err != nil || len(log) != rounds+1 {
			t.Fatalf("run %d log: %d entries %v", i, len(log), err)
		}
	}
}

// A Save whose write fails (here: a log row already holds its sequence,
// as a damaged file might) fails alone: the Saves committed with it in the
// same batch succeed, and it leaves nothing behind.
func TestGroupCommitIsolatesWriteFailure(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "ordo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	const runs = 30
	for i := range runs {
		if err := s.Save(ctx, storetest.SimpleRun(fmt.Sprint("w", i), "u", contracts.RunRunning, 1, storetest.Base)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO run_log (run_id, seq, format_version, whole, data) VALUES ('w0', 2, 1, 0, x'7b7d')`); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			errs[i] = s.Save(ctx, storetest.SimpleRun(fmt.Sprint("w", i), "u", contracts.RunCompleted, 2, storetest.Base))
		})
	}
	wg.Wait()
	if contracts.CodeOf(errs[0]) != contracts.CodeStore {
		t.Fatalf("the failing write: %v", errs[0])
	}
	for i := 1; i < runs; i++ {
		if errs[i] != nil {
			t.Fatalf("save %d failed beside the failing one: %v", i, errs[i])
		}
	}
	if _, err := s.w.ExecContext(ctx, `DELETE FROM run_log WHERE run_id = 'w0' AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "w0")
	if err != nil || got.Seq != 1 || got.Status != contracts.RunRunning {
		t.Fatalf("the failed save changed its run: %+v %v", got, err)
	}
	if l, err := s.List(ctx, memory.Filter{Status: []contracts.RunStatus{contracts.RunCompleted}}); err != nil || len(l) != runs-1 {
		t.Fatalf("%d runs completed, want %d (%v)", len(l), runs-1, err)
	}
}

// Log entries written when each one repeated the goal still load.
func TestGoalInEveryEntry(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "ordo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.RequireGoalInEveryEntry(t, s, func(t *testing.T, id string, from int64, goal string) {
		if _, err := s.w.Exec(`UPDATE run_log SET data = CAST(json_set(CAST(data AS TEXT), '$.goal', ?) AS BLOB)
			WHERE run_id = ? AND whole = 0 AND seq >= ?`, goal, id, from); err != nil {
			t.Fatal(err)
		}
	})
}
