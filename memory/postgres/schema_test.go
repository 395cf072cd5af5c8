package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/ids"
	"github.com/ordo-run/ordo/internal/pgtest"
	"github.com/ordo-run/ordo/memory/postgres"
	"github.com/ordo-run/ordo/memory/storetest"
)

// A database a newer build migrated (a schema_migrations row beyond this
// build's last migration) is refused by Open, with or without
// auto-migration, and by Migrate, and nothing is written into it.
func TestNewerSchemaRefused(t *testing.T) {
	dsn, schema := pgtest.DSN(t), newSchema(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES (999, '0999_future')`); err != nil {
		t.Fatal(err)
	}
	var before int
	if err := s.Pool().QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	s.Close()
	refused := func(what string, err error) {
		t.Helper()
		if contracts.CodeOf(err) != contracts.CodeCheckpointFormat || !strings.Contains(err.Error(), "999") {
			t.Fatalf("%s of a database at schema 999: %v, want CodeCheckpointFormat naming the version", what, err)
		}
	}
	_, err = postgres.Open(ctx, dsn, postgres.WithSchema(schema))
	refused("open", err)
	_, err = postgres.Open(ctx, dsn, postgres.WithSchema(schema), postgres.WithAutoMigrate(false))
	refused("open without migrate", err)
	applied, err := postgres.Migrate(ctx, dsn, postgres.WithSchema(schema))
	refused("migrate", err)
	if len(applied) != 0 {
		t.Fatalf("migrate applied %v", applied)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var after int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{schema, "schema_migrations"}.Sanitize()).Scan(&after); err != nil || after != before {
		t.Fatalf("schema_migrations rows %d -> %d (%v)", before, after, err)
	}
}

// A server whose database role may read and write Ordo's tables but not
// create anything (the least privilege an operator gives a server once
// `ordo migrate` ran as the owner) opens an up-to-date database with the
// default auto-migration and drives runs; on a database that lacks a
// migration it is refused saying to run `ordo migrate`.
func TestOpenWithDataRightsOnly(t *testing.T) {
	dsn, schema := pgtest.DSN(t), newSchema(t)
	ctx := context.Background()
	if _, err := postgres.Migrate(ctx, dsn, postgres.WithSchema(schema)); err != nil {
		t.Fatal(err)
	}
	role := "ordo_dml_" + ids.Hex(4)
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	sch, r := pgx.Identifier{schema}.Sanitize(), pgx.Identifier{role}.Sanitize()
	for _, q := range []string{`CREATE ROLE ` + r, `GRANT USAGE ON SCHEMA ` + sch + ` TO ` + r,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ` + sch + ` TO ` + r} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		admin, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer admin.Close(ctx)
		admin.Exec(ctx, `DROP OWNED BY `+r)
		admin.Exec(ctx, `DROP ROLE `+r)
	})
	// The session runs as that role (the test connects as a superuser).
	asRole := pgtest.WithParam(t, dsn, "role", role)
	s, err := postgres.Open(ctx, asRole, postgres.WithSchema(schema))
	if err != nil {
		t.Fatalf("open as a role with data rights only: %v", err)
	}
	defer s.Close()
	var who string
	if err := s.Pool().QueryRow(ctx, `SELECT current_user`).Scan(&who); err != nil || who != role {
		t.Fatalf("connected as %q (%v), want %q", who, err, role)
	}
	run := storetest.SimpleRun("dml", "u", contracts.RunRunning, 1, storetest.Base)
	if err := s.Save(ctx, run); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `DELETE FROM `+pgx.Identifier{schema, "schema_migrations"}.Sanitize()+` WHERE version = (SELECT max(version) FROM `+pgx.Identifier{schema, "schema_migrations"}.Sanitize()+`)`); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(ctx, asRole, postgres.WithSchema(schema))
	if err == nil || !strings.Contains(err.Error(), "ordo migrate") {
		t.Fatalf("open of a database behind the build, without rights to migrate it: %v", err)
	}
}

// Every pooled connection dropped by the server (Postgres restarted, or
// pg_terminate_backend) while idle: the store's next statements run on
// fresh connections instead of failing, one per dead connection.
func TestDroppedConnectionsReplaced(t *testing.T) {
	dsn, schema := pgtest.DSN(t), newSchema(t)
	ctx := context.Background()
	app := "ordo_drop_" + ids.Hex(4)
	const conns = 4
	s, err := postgres.Open(ctx, pgtest.WithParam(t, dsn, "application_name", app), postgres.WithSchema(schema), postgres.WithMaxConns(conns))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Fill the pool: conns connections, each used.
	held := make([]*pgxpool.Conn, conns)
	for i := range held {
		if held[i], err = s.Pool().Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range held {
		c.Release()
	}
	if n := pgtest.Terminate(t, "application_name", app); n != conns {
		t.Fatalf("terminated %d sessions, want %d", n, conns)
	}
	for i := range conns + 1 {
		run := storetest.SimpleRun(fmt.Sprint("after-drop-", i), "u", contracts.RunRunning, 1, storetest.Base)
		if err := s.Save(ctx, run); err != nil {
			t.Fatalf("save %d after the connections dropped: %v", i, err)
		}
		if _, err := s.Load(ctx, run.ID); err != nil {
			t.Fatalf("load %d after the connections dropped: %v", i, err)
		}
	}
}
