package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ordo-run/ordo/internal/pgtest"
)

// What the liveness peek costs a statement: the cheapest round trip
// (SELECT 1) through a pool without the peek and with it, alternated, so
// compare each pair of one run.
func BenchmarkAlivePeek(b *testing.B) {
	dsn := pgtest.DSN(b)
	for range 3 {
		for _, peek := range []bool{false, true} {
			name := "plain"
			if peek {
				name = "peek"
			}
			b.Run(name, func(b *testing.B) {
				cfg, err := pgxpool.ParseConfig(dsn)
				if err != nil {
					b.Fatal(err)
				}
				if peek {
					cfg.PrepareConn = alive
				}
				p, err := pgxpool.NewWithConfig(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				for b.Loop() {
					var x int
					if err := p.QueryRow(context.Background(), "SELECT 1").Scan(&x); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
