package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/pgtest"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/embedded"
	"github.com/ordo-run/ordo/memory/postgres"
)

// BenchmarkConcurrentRuns: 100 runs of 10 no-op steps each, and 100 runs
// of 100, all at once through one engine against one store (every step
// checkpointed, leases on); reports whole runs and steps per second. The
// Postgres case needs ORDO_TEST_POSTGRES_DSN; it first measures, in the
// same run, the anchor (single-row commits from 16 writers on the same
// database, pgtest.SingleRowCommits) and reports steps/s as x-anchor.
//
//	go test -run '^$' -bench 'ConcurrentRuns' -benchtime 3x ./agent/
func BenchmarkConcurrentRuns(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) memory.Checkpointer
	}{
		{"memory", func(*testing.B) memory.Checkpointer { return newStore() }},
		{"embedded", func(b *testing.B) memory.Checkpointer {
			st, err := embedded.Open(filepath.Join(b.TempDir(), "ordo.db"))
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
		{"postgres", benchPostgres},
	}
	const runs = 100
	var anchor float64
	b.Run("postgres/anchor-16-writers", func(b *testing.B) {
		st := benchPostgres(b).(*postgres.Store)
		defer st.Close()
		anchor = pgtest.SingleRowCommits(b, st.Pool(), 16, 1000)
		b.ReportMetric(anchor, "rows/s")
	})
	for _, steps := range []int{10, 100} {
		out := `{"type":"object","required":["v"],"properties":{"v":{"type":"integer"}}}`
		produces := map[string]string{}
		for i := range steps {
			produces[fmt.Sprintf("k%d", i)] = "$.v"
		}
		tt := newTools(b, tool("noop.run", contracts.RiskRead, `{"type":"object"}`, out, produces, returns(map[string]any{"v": 1})))
		plan := mustPlan(b, strings.Replace(noopPlan(steps), `"max_actions":64`, fmt.Sprintf(`"max_actions":%d`, max(64, steps)), 1))
		for _, s := range stores {
			b.Run(fmt.Sprintf("%s/%dx%d", s.name, runs, steps), func(b *testing.B) {
				store := s.open(b)
				defer store.Close()
				e := New(Config{Parallelism: 1}, Deps{Tools: tt, Store: store})
				for b.Loop() {
					var g errgroup.Group
					for range runs {
						g.Go(func() error {
							run, err := e.Run(context.Background(), Request{Plan: plan})
							if err == nil && run.Status != contracts.RunCompleted {
								err = fmt.Errorf("run %s is %s: %+v", run.ID, run.Status, run.Error)
							}
							return err
						})
					}
					if err := g.Wait(); err != nil {
						b.Fatal(err)
					}
				}
				secs := b.Elapsed().Seconds()
				b.ReportMetric(float64(b.N*runs)/secs, "runs/s")
				b.ReportMetric(float64(b.N*runs*steps)/secs, "steps/s")
				if s.name == "postgres" && anchor > 0 {
					b.ReportMetric(float64(b.N*runs*steps)/secs/anchor, "x-anchor")
				}
			})
		}
	}
}

// benchPostgres opens a Postgres store in a fresh schema, dropped at the end.
func benchPostgres(b *testing.B) memory.Checkpointer {
	dsn := pgtest.DSN(b)
	schema := pgtest.Schema(b, dsn, "ordo_bench_")
	ctx := context.Background()
	// As many connections as the store benchmarks and their anchor use
	// (memory/postgres/bench_test.go): commits are what a step costs.
	st, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema), postgres.WithMaxConns(16))
	if err != nil {
		b.Fatal(err)
	}
	return st
}
