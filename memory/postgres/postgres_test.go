package postgres_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/pgtest"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/postgres"
	"github.com/ordo-run/ordo/memory/storetest"
)

// Several processes migrating one database at once: each migration is
// applied exactly once and every caller succeeds.
func TestConcurrentMigrate(t *testing.T) {
	dsn, schema := pgtest.DSN(t), newSchema(t)
	const racers = 4
	results := make([][]string, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			results[i], errs[i] = postgres.Migrate(context.Background(), dsn, postgres.WithSchema(schema), postgres.WithMaxConns(1))
		})
	}
	close(start)
	wg.Wait()
	var applied []string
	for i := range racers {
		if errs[i] != nil {
			t.Fatalf("racer %d: %v", i, errs[i])
		}
		applied = append(applied, results[i]...)
	}
	if !slices.Equal(applied, []string{"0001_init", "0002_run_log", "0003_sessions", "0004_run_requests"}) {
		t.Fatalf("applied across racers: %v, want each migration once", applied)
	}
	again, err := postgres.Migrate(context.Background(), dsn, postgres.WithSchema(schema))
	if err != nil || len(again) != 0 {
		t.Fatalf("second migrate: %v %v", again, err)
	}
}

func TestOpenWithoutMigrateRefusesOldSchema(t *testing.T) {
	dsn, schema := pgtest.DSN(t), newSchema(t)
	ctx := context.Background()
	_, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema), postgres.WithAutoMigrate(false))
	if contracts.CodeOf(err) != contracts.CodeStore || !strings.Contains(err.Error(), "ordo migrate") {
		t.Fatalf("open of an unmigrated database: %v", err)
	}
	if _, err := postgres.Migrate(ctx, dsn, postgres.WithSchema(schema)); err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema), postgres.WithAutoMigrate(false))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestBadConfig(t *testing.T) {
	ctx := context.Background()
	_, err := postgres.Open(ctx, "postgres://ordo:hunter2@localhost:notaport/db")
	if contracts.CodeOf(err) != contracts.CodeInvalidConfig || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("bad DSN: %v", err)
	}
	_, err = postgres.Open(ctx, "postgres:///x", postgres.WithMaxConns(-1))
	if contracts.CodeOf(err) != contracts.CodeInvalidConfig {
		t.Fatalf("negative max conns: %v", err)
	}
}

// Save appends one log row per sequence (the first a whole run, the
// others deltas), a refused write adds nothing, the step_records and
// decisions views list each record once at the entry that first held it,
// the runs row no longer holds the run, and pruning removes a run's rows
// from every table.
func TestLogTables(t *testing.T) {
	s := openTest(t)
	defer s.Close()
	ctx := context.Background()
	run := storetest.FullRun("hist", 1) // one step, one decision
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	run.Seq, run.Status = 2, contracts.RunRunning
	for a := 2; a <= 3; a++ {
		run.Steps = append(run.Steps, contracts.StepRecord{ActionID: "a1", Tool: "cal.book", Attempt: a, Status: contracts.StepSucceeded, StartedAt: storetest.Base})
	}
	run.Decisions = append(run.Decisions, contracts.DecisionRecord{
		Interrupt: contracts.Interrupt{Kind: contracts.InterruptStepApproval, CreatedAt: storetest.Base},
		Decision:  contracts.Decision{Kind: contracts.DecisionApprove, By: "bo"}, At: storetest.Base.Add(time.Minute)})
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	stale := storetest.FullRun("hist", 2)
	stale.Steps = append(stale.Steps, stale.Steps...)
	if err := s.Save(ctx, stale); contracts.CodeOf(err) != contracts.CodeSequenceConflict {
		t.Fatalf("stale save: %v", err)
	}
	// Seq 3 is an entry even if it carries no new records.
	run.Seq = 3
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}

	db := s.Pool()
	type entry struct {
		seq   int64
		whole bool
	}
	rows, _ := db.Query(ctx, `SELECT seq, whole FROM run_log WHERE run_id = 'hist' ORDER BY seq`)
	log, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (entry, error) {
		var e entry
		return e, r.Scan(&e.seq, &e.whole)
	})
	if err != nil || !slices.Equal(log, []entry{{1, true}, {2, false}, {3, false}}) {
		t.Fatalf("run_log %v %v", log, err)
	}
	type step struct {
		idx, attempt int
		seq          int64
		status       string
	}
	rows, _ = db.Query(ctx, `SELECT idx, seq, attempt, status FROM step_records WHERE run_id = 'hist' ORDER BY idx`)
	steps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (step, error) {
		var st step
		return st, r.Scan(&st.idx, &st.seq, &st.attempt, &st.status)
	})
	want := []step{{idx: 0, attempt: 1, seq: 1, status: "failed"}, {idx: 1, attempt: 2, seq: 2, status: "succeeded"}, {idx: 2, attempt: 3, seq: 2, status: "succeeded"}}
	if err != nil || !slices.Equal(steps, want) {
		t.Fatalf("step_records %+v %v, want %+v", steps, err, want)
	}
	var kinds, by string
	if err := db.QueryRow(ctx, `SELECT string_agg(interrupt || ':' || decision, ',' ORDER BY idx), string_agg(decided_by, ',' ORDER BY idx)
		FROM decisions WHERE run_id = 'hist'`).Scan(&kinds, &by); err != nil {
		t.Fatal(err)
	}
	if kinds != "plan_approval:edit,step_approval:approve" || by != "ana,bo" {
		t.Fatalf("decisions %q by %q", kinds, by)
	}
	var cols int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema()
		AND table_name = 'runs' AND column_name IN ('run', 'format_version', 'step_count', 'decision_count')`).Scan(&cols); err != nil || cols != 0 {
		t.Fatalf("runs still has %d checkpoint columns %v", cols, err)
	}

	run.Seq, run.Status, run.UpdatedAt = 4, contracts.RunCompleted, storetest.Base
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	// Compaction leaves the views as they were, at the whole entry's seq.
	if n, err := s.Compact(ctx, storetest.Base.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("compact %d %v", n, err)
	}
	var nsteps, maxIdx, seq int
	if err := db.QueryRow(ctx, `SELECT count(*), max(idx), min(seq) FROM step_records WHERE run_id = 'hist'`).Scan(&nsteps, &maxIdx, &seq); err != nil ||
		nsteps != 3 || maxIdx != 2 || seq != 4 {
		t.Fatalf("step_records after compaction: %d rows, max idx %d, seq %d, %v", nsteps, maxIdx, seq, err)
	}
	if n, err := s.Prune(ctx, storetest.Base.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("prune %d %v", n, err)
	}
	var left int
	db.QueryRow(ctx, `SELECT (SELECT count(*) FROM run_log) + (SELECT count(*) FROM run_snapshots) + (SELECT count(*) FROM runs)`).Scan(&left)
	if left != 0 {
		t.Fatalf("%d rows left after prune", left)
	}
}

// A database migrated from schema 0001, where each run was one checkpoint
// document (plus every checkpoint, step and decision in tables of their
// own): each run loads as it was, its log is one whole-run entry, the
// step_records and decisions views show what the tables held, and it
// carries on as deltas. A format 0 checkpoint is upgraded on load.
func TestMigrateFrom0001(t *testing.T) {
	dsn, schema := pgtest.DSN(t), newSchema(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	init, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	sch := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{`CREATE SCHEMA ` + sch, `SET search_path = ` + sch, string(init),
		`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
		`INSERT INTO schema_migrations (version, name) VALUES (1, '0001_init')`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	full := storetest.FullRun("v1", 3)
	data, err := memory.EncodeRun(full)
	if err != nil {
		t.Fatal(err)
	}
	insert := `INSERT INTO runs (id, user_id, goal, status, final, seq, format_version, created_at, updated_at, step_count, decision_count, run)
		VALUES ($1, $2, $3, $4, false, $5, $6, $7, $8, $9, $10, $11)`
	if _, err := conn.Exec(ctx, insert, full.ID, full.UserID, full.Goal, full.Status, full.Seq, 1, full.CreatedAt, full.UpdatedAt,
		len(full.Steps), len(full.Decisions), data); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO checkpoints (run_id, seq, format_version, run) VALUES ('v1', 3, 1, $1)`, data); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO step_records (run_id, idx, seq, action_id, tool, attempt, status, record)
		VALUES ('v1', 0, 1, 'a1', 'cal.book', 1, 'failed', '{}')`); err != nil {
		t.Fatal(err)
	}
	v0 := time.Date(2025, 11, 2, 9, 0, 5, 500_000_000, time.UTC)
	if _, err := conn.Exec(ctx, insert, "run-v0", "ana", "email", "interrupted", 4, 0, v0.Add(-time.Minute), v0, 1, 0, storetest.RunV0); err != nil {
		t.Fatal(err)
	}

	s, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, old := storetest.RequireMigrated(t, s, full)
	var views string
	if err := s.Pool().QueryRow(ctx, `SELECT string_agg(run_id || '/' || idx || '/' || action_id || '/' || status, ',' ORDER BY run_id, idx)
		FROM step_records`).Scan(&views); err != nil || views != "run-v0/0/a1/succeeded,v1/0/a1/failed" {
		t.Fatalf("step_records after migration: %q %v", views, err)
	}
	storetest.RequireCarriesOn(t, s, got, old)
}

// JSONB cannot hold \u0000; such a run is the caller's bad input.
func TestNULRefused(t *testing.T) {
	s := openTest(t)
	defer s.Close()
	run := storetest.SimpleRun("nul", "u", contracts.RunRunning, 1, storetest.Base)
	run.Goal = "a\x00b"
	err := s.Save(context.Background(), run)
	if contracts.CodeOf(err) != contracts.CodeInvalidInput {
		t.Fatalf("NUL goal: %v", err)
	}
	if _, err := s.Load(context.Background(), "nul"); contracts.CodeOf(err) != contracts.CodeRunNotFound {
		t.Fatalf("refused run was stored: %v", err)
	}
}

// A payload redacted by the engine reaches no table with its secret.
func TestRedactedSecretNotStored(t *testing.T) {
	s := openTest(t)
	defer s.Close()
	ctx := context.Background()
	const secret = "sk-live-9f8e7d6c"
	payload := contracts.Redact(json.RawMessage(`{"to":"ana","api_key":"`+secret+`"}`), []string{"api_key"}).(json.RawMessage)
	run := storetest.SimpleRun("sec", "u", contracts.RunRunning, 1, storetest.Base)
	run.Steps = []contracts.StepRecord{{ActionID: "a", Tool: "mail.send", Payload: payload, Status: contracts.StepStarted}}
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	var hits int
	if err := s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM runs r WHERE r::text LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM run_log WHERE convert_from(entry, 'UTF8') LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM run_snapshots WHERE convert_from(run, 'UTF8') LIKE '%' || $1 || '%')`, secret).Scan(&hits); err != nil {
		t.Fatal(err)
	}
	if hits != 0 || !strings.Contains(string(payload), contracts.Redacted) {
		t.Fatalf("secret found in %d rows (payload %s)", hits, payload)
	}
}

// Log entries written when each one repeated the goal still load.
func TestGoalInEveryEntry(t *testing.T) {
	s := openTest(t)
	defer s.Close()
	storetest.RequireGoalInEveryEntry(t, s, func(t *testing.T, id string, from int64, goal string) {
		if _, err := s.Pool().Exec(context.Background(), `UPDATE run_log
			SET entry = convert_to(jsonb_set(convert_from(entry, 'UTF8')::jsonb, '{goal}', to_jsonb($1::text))::text, 'UTF8')
			WHERE run_id = $2 AND NOT whole AND seq >= $3`, goal, id, from); err != nil {
			t.Fatal(err)
		}
	})
}

// A whole-run entry is joined in the database from its head and the
// snapshot, sent once: it holds exactly the bytes memory.NewEntry wrote.
func TestWholeEntryJoined(t *testing.T) {
	s := openTest(t)
	defer s.Close()
	ctx := context.Background()
	for seq := int64(1); seq <= 2; seq++ {
		run := storetest.FullRun("whole", seq) // never logged: a whole entry at either seq
		want, err := memory.NewEntry(run)
		if err != nil || !want.Whole {
			t.Fatalf("entry %+v %v", want, err)
		}
		if err := s.Save(ctx, run); err != nil {
			t.Fatal(err)
		}
		var got []byte
		if err := s.Pool().QueryRow(ctx, `SELECT entry FROM run_log WHERE run_id = 'whole' AND seq = $1`, seq).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want.Data) {
			t.Fatalf("seq %d: stored\n%s\nwant\n%s", seq, got, want.Data)
		}
	}
}
