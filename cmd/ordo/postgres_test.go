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

// TestPostgresStore runs the CLI on a Postgres store: `ordo migrate`, a
// run interrupted in one process and resumed in another. It needs
// ORDO_TEST_POSTGRES_DSN (a URL; each run gets a fresh database).
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
	e := newEnv(t)
	e.vars = append(e.vars, "ORDO_STORE="+u.String())

	r := e.ordo("", "migrate")
	r.want(t, 0)
	if !strings.Contains(r.stdout, "applied ") {
		t.Errorf("migrate applied nothing on a fresh database:\n%s", r.stdout)
	}
	e.ordo("", "migrate").want(t, 0) // idempotent

	r = e.ordo("", "run", "--plan", firstRun, "--json")
	r.want(t, 3)
	id := r.run(t).ID
	r = e.ordo("approve\napprove\n", "runs", "resume", id, "--json")
	r.want(t, 0)
	if run := r.run(t); run.Status != contracts.RunCompleted {
		t.Errorf("status %s", run.Status)
	}
	if strings.Contains(r.stderr, u.String()) {
		t.Error("the store's DSN appears in the output")
	}
}
