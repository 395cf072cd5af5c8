package postgres_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/pgtest"
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
	if !slices.Equal(applied, []string{"0001_init"}) {
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

// Save keeps every checkpoint and appends step and decision records once,
// at the sequence that first held them; a refused write adds nothing, and
// pruning removes a run's rows from every table.
func TestHistoryTables(t *testing.T) {
	s := openTest(t)
	defer s.Close()
	ctx := context.Background()
	run := storetest.FullRun("hist", 1) // one step, one decision
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	run = storetest.FullRun("hist", 2)
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
	// Seq 3 drops nothing from the log even if it carries no new records.
	run.Seq = 3
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}

	db := s.Pool()
	var cps []int64
	rows, _ := db.Query(ctx, `SELECT seq FROM checkpoints WHERE run_id = 'hist' ORDER BY seq`)
	for rows.Next() {
		var v int64
		rows.Scan(&v)
		cps = append(cps, v)
	}
	if rows.Err() != nil || !slices.Equal(cps, []int64{1, 2, 3}) {
		t.Fatalf("checkpoints %v %v", cps, rows.Err())
	}
	type step struct {
		idx, attempt int
		seq          int64
		status       string
	}
	var steps []step
	rows, _ = db.Query(ctx, `SELECT idx, seq, attempt, status FROM step_records WHERE run_id = 'hist' ORDER BY idx`)
	for rows.Next() {
		var st step
		rows.Scan(&st.idx, &st.seq, &st.attempt, &st.status)
		steps = append(steps, st)
	}
	want := []step{{idx: 0, attempt: 1, seq: 1, status: "failed"}, {idx: 1, attempt: 2, seq: 2, status: "succeeded"}, {idx: 2, attempt: 3, seq: 2, status: "succeeded"}}
	if rows.Err() != nil || !slices.Equal(steps, want) {
		t.Fatalf("step_records %+v, want %+v", steps, want)
	}
	var kinds, by string
	if err := db.QueryRow(ctx, `SELECT string_agg(interrupt || ':' || decision, ',' ORDER BY idx), string_agg(decided_by, ',' ORDER BY idx)
		FROM decisions WHERE run_id = 'hist'`).Scan(&kinds, &by); err != nil {
		t.Fatal(err)
	}
	if kinds != "plan_approval:edit,step_approval:approve" || by != "ana,bo" {
		t.Fatalf("decisions %q by %q", kinds, by)
	}

	run.Seq, run.Status, run.UpdatedAt = 4, contracts.RunCompleted, storetest.Base
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Prune(ctx, storetest.Base.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("prune %d %v", n, err)
	}
	var left int
	db.QueryRow(ctx, `SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM step_records) + (SELECT count(*) FROM decisions)`).Scan(&left)
	if left != 0 {
		t.Fatalf("%d history rows left after prune", left)
	}
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
	if err := s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM runs WHERE run::text LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM checkpoints WHERE run::text LIKE '%' || $1 || '%')
		+ (SELECT count(*) FROM step_records WHERE record::text LIKE '%' || $1 || '%')`, secret).Scan(&hits); err != nil {
		t.Fatal(err)
	}
	if hits != 0 || !strings.Contains(string(payload), contracts.Redacted) {
		t.Fatalf("secret found in %d rows (payload %s)", hits, payload)
	}
}
