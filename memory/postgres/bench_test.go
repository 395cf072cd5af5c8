package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ordo-run/ordo/internal/pgtest"
	"github.com/ordo-run/ordo/memory/postgres"
	"github.com/ordo-run/ordo/memory/storetest"
)

// benchConns is the pool size of the benchmarked stores and of the
// single-row-commit anchor: commits are what a step costs, and Postgres
// flushes the commits of concurrent connections together.
const benchConns = 16

// meter reports the bytes of the store's tables (with their indexes and
// TOAST) and the write-ahead log written, cluster-wide, between two reads.
func meter(b *testing.B, s *postgres.Store) storetest.Meter {
	ctx := context.Background()
	read := func(q string) int64 {
		var v int64
		if err := s.Pool().QueryRow(ctx, q).Scan(&v); err != nil {
			b.Fatal(err)
		}
		return v
	}
	return storetest.Meter{
		Stored: func() int64 {
			return read(`SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c
				WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace
				AND c.relname IN ('runs', 'run_log', 'run_snapshots')`)
		},
		WAL: func() int64 { return read(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint`) },
	}
}

func BenchmarkSave(b *testing.B) {
	s := openTest(b, postgres.WithMaxConns(benchConns))
	defer s.Close()
	storetest.BenchSave(b, s, 10, meter(b, s))
}

// BenchmarkConcurrentRuns measures, in one run so that the figures can be
// compared: the anchor, single-row autocommit INSERTs of a small row from
// 16 writers (rows/s: what this database and disk can commit), then 100
// runs at once of 10 and of 100 steps each through the store (steps/s,
// stored-B/step, wal-B/step, and the ratio of steps/s to the anchor's
// rows/s as x-anchor).
func BenchmarkConcurrentRuns(b *testing.B) {
	var anchor float64
	b.Run("anchor-16-writers", func(b *testing.B) {
		s := openTest(b, postgres.WithMaxConns(benchConns))
		defer s.Close()
		anchor = pgtest.SingleRowCommits(b, s.Pool(), 16, 1000)
		b.ReportMetric(anchor, "rows/s")
	})
	for _, steps := range []int{10, 100} {
		b.Run(fmt.Sprintf("100x%d", steps), func(b *testing.B) {
			s := openTest(b, postgres.WithMaxConns(benchConns))
			defer s.Close()
			storetest.BenchConcurrentRuns(b, s, 100, steps, meter(b, s))
			if anchor > 0 {
				b.ReportMetric(float64(b.N*100*steps)/b.Elapsed().Seconds()/anchor, "x-anchor")
			}
		})
	}
}

// BenchmarkLongGoal: stored bytes per step of 10 runs × 100 steps whose
// goal is 10,000 bytes.
func BenchmarkLongGoal(b *testing.B) {
	s := openTest(b)
	defer s.Close()
	storetest.BenchLongGoal(b, s, 10, 100, meter(b, s))
}

// BenchmarkSnapshot64MiB: the Save that snapshots a run at the run bound
// (64 MiB of results and state) at an interrupt.
func BenchmarkSnapshot64MiB(b *testing.B) {
	s := openTest(b)
	defer s.Close()
	storetest.BenchSnapshot(b, s, 64<<20)
}

// BenchmarkWhole64MiB: the Save of a new run at the run bound, as a fork
// of one is saved (a whole-run entry and its snapshot).
func BenchmarkWhole64MiB(b *testing.B) {
	s := openTest(b)
	defer s.Close()
	storetest.BenchWhole(b, s, 64<<20)
}
