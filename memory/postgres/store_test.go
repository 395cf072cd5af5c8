package postgres_test

import (
	"context"
	"testing"

	"github.com/ordo-run/ordo/internal/pgtest"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/postgres"
	"github.com/ordo-run/ordo/memory/storetest"
)

// newSchema names a fresh schema, dropped when the test ends, so tests and
// packages can share one database in parallel.
func newSchema(t testing.TB) string { return pgtest.Schema(t, pgtest.DSN(t), "ordo_test_") }

func openTest(t testing.TB, opts ...postgres.Option) *postgres.Store {
	s, err := postgres.Open(context.Background(), pgtest.DSN(t), append([]postgres.Option{postgres.WithSchema(newSchema(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Checkpointer { return openTest(t) })
}
