package pgtest

import (
	"context"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ordo-run/ordo/internal/ids"
)

// Env names the test database's connection string.
const Env = "ORDO_TEST_POSTGRES_DSN"

// DSN is the test database; t is skipped without one.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(Env)
	if dsn == "" {
		t.Skipf("%s is not set: no PostgreSQL to test against (e.g. postgres:///ordo_test?host=/var/run/postgresql; see docs/stores.md)", Env)
	}
	return dsn
}

// Schema names a fresh schema (prefix + random hex) on dsn, dropped when t
// ends; the store creates it.
func Schema(t testing.TB, dsn, prefix string) string {
	t.Helper()
	schema := prefix + randomHex()
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("drop schema: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
	})
	return schema
}

// Database creates a fresh database (prefix + random hex) beside the test
// database, dropped when t ends, and returns its URL and name; for
// processes that take a whole database (ordo migrate, ordo serve).
func Database(t testing.TB, prefix string) (dsn, name string) {
	t.Helper()
	admin := DSN(t)
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL: %v", Env, err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	db := prefix + randomHex()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		conn.Close(ctx)
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer conn.Close(context.Background())
		conn.Exec(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)")
	})
	u.Path = "/" + db
	return u.String(), db
}

func randomHex() string {
	return ids.Hex(6)
}
