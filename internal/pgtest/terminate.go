package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ordo-run/ordo/internal/testwait"
)

// WithParam is dsn (a URL) with the query parameter key set to value:
// a runtime parameter such as application_name or role for the sessions.
func WithParam(t testing.TB, dsn, key, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// Terminate drops every session whose pg_stat_activity column (datname or
// application_name) is value, as a Postgres restart would, and returns
// once they are gone: their clients' sockets hold the server's goodbye.
// It returns how many it terminated.
func Terminate(t testing.TB, column, value string) int {
	t.Helper()
	if column != "datname" && column != "application_name" {
		t.Fatalf("pgtest.Terminate: column %q", column)
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var n int
	if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE `+column+` = $1 AND pid <> pg_backend_pid()`, value).Scan(&n); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, time.Minute, func() error {
		var left int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE `+column+` = $1 AND pid <> pg_backend_pid()`, value).Scan(&left); err != nil || left > 0 {
			return fmt.Errorf("%d sessions left (%v)", left, err)
		}
		return nil
	})
	return n
}
