package main_test

import (
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/pgtest"
)

// TestPostgresStore runs the CLI on a Postgres store given with --store
// (over ORDO_STORE=embedded): `ordo migrate`, a run interrupted in one
// process and resumed in another; without the flag the embedded store does
// not know the run. It needs ORDO_TEST_POSTGRES_DSN (a URL; each run gets a
// fresh database).
func TestPostgresStore(t *testing.T) {
	t.Parallel()
	dsn, db := pgtest.Database(t, "ordo_cli_")
	e := newEnv(t)
	e.vars = append(e.vars, "ORDO_STORE=embedded", "ORDO_LOG_LEVEL=debug")

	r := e.ordo("", "--store", dsn, "migrate")
	r.wantOut(t, 0, "applied ")
	r = e.ordo("", "migrate", "--store", dsn) // idempotent; the flag after the command too
	r.wantOut(t, 0, "(0 migration(s) applied now)")

	r = e.ordo("", "run", "--plan", firstRun, "--json", "--store", dsn)
	id := r.wantRun(t, 3).ID
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
