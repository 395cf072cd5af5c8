package main_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ordo-run/ordo/contracts"
)

// TestPostgresStore runs the CLI on a Postgres store given with --store
// (over ORDO_STORE=embedded): `ordo migrate`, a run interrupted in one
// process and resumed in another; without the flag the embedded store does
// not know the run. It needs ORDO_TEST_POSTGRES_DSN (a URL; each run gets a
// fresh database).
func TestPostgresStore(t *testing.T) {
	t.Parallel()
	admin := os.Getenv("ORDO_TEST_POSTGRES_DSN")
	if admin == "" {
		t.Skip("ORDO_TEST_POSTGRES_DSN is unset (e.g. postgres:///ordo_test?host=/var/run/postgresql)")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	rand.Read(b[:])
	db := "ordo_cli_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Exec(context.Background(), "DROP DATABASE "+db+" WITH (FORCE)") })
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("ORDO_TEST_POSTGRES_DSN must be a postgres:// URL: %v", err)
	}
	u.Path = "/" + db
	dsn := u.String()
	e := newEnv(t)
	e.vars = append(e.vars, "ORDO_STORE=embedded", "ORDO_LOG_LEVEL=debug")

	r := e.ordo("", "--store", dsn, "migrate")
	r.want(t, 0)
	if !strings.Contains(r.stdout, "applied ") {
		t.Errorf("migrate applied nothing on a fresh database:\n%s", r.stdout)
	}
	r = e.ordo("", "migrate", "--store", dsn) // idempotent; the flag after the command too
	r.want(t, 0)
	if !strings.Contains(r.stdout, "(0 migration(s) applied now)") {
		t.Errorf("migrate applied again:\n%s", r.stdout)
	}

	r = e.ordo("", "run", "--plan", firstRun, "--json", "--store", dsn)
	r.want(t, 3)
	id := r.run(t).ID
	outputs := r.stdout + r.stderr
	// Without --store, ORDO_STORE=embedded: the run is not there.
	r = e.ordo("", "runs", "show", id)
	if r.code == 0 || !strings.Contains(r.stderr, "3001") {
		t.Errorf("the embedded store knows the Postgres run: exit %d\n%s", r.code, r.stderr)
	}
	r = e.ordo("approve\napprove\n", "--store", dsn, "runs", "resume", id, "--json")
	r.want(t, 0)
	if run := r.run(t); run.Status != contracts.RunCompleted {
		t.Errorf("status %s", run.Status)
	}
	outputs += r.stdout + r.stderr
	r = e.ordo("", "--store", dsn, "runs", "list", "--json")
	r.want(t, 0)
	if !strings.Contains(r.stdout, id) {
		t.Errorf("runs list --store lacks %s:\n%s", id, r.stdout)
	}
	if strings.Contains(outputs+r.stderr, dsn) || strings.Contains(outputs+r.stderr, db) {
		t.Error("the store's DSN appears in the output")
	}
}
