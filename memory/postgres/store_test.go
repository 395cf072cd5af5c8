package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/postgres"
	"github.com/ordo-run/ordo/memory/storetest"
)

const dsnEnv = "ORDO_TEST_POSTGRES_DSN"

// testDSN is the database tests use; they skip, saying why, without one.
func testDSN(t testing.TB) string {
	dsn := os.Getenv(dsnEnv)
	if dsn == "" {
		t.Skipf("%s is not set: no PostgreSQL to test against (see docs/stores.md)", dsnEnv)
	}
	return dsn
}

// newSchema names a fresh schema and drops it when the test ends, so tests
// and packages can share one database in parallel.
func newSchema(t testing.TB) string {
	dsn := testDSN(t)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "ordo_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return schema
}

func openTest(t testing.TB, opts ...postgres.Option) *postgres.Store {
	s, err := postgres.Open(context.Background(), testDSN(t), append([]postgres.Option{postgres.WithSchema(newSchema(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Checkpointer { return openTest(t) })
}
