package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ordo-run/ordo/internal/pgtest"
	"github.com/ordo-run/ordo/internal/testwait"
)

// A server whose database connections are all dropped (Postgres
// restarted, or an operator's pg_terminate_backend) between two runs
// carries on: the next run it is given completes, and so does the one
// after.
func TestServerSurvivesDroppedConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dsn, db := pgtest.Database(t, "ordo_drop_")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const token = "drop-conns-token-0123456789"
	srv := serve(t, ctx, serverSpec{store: dsn, token: token, share: t.TempDir(),
		config: "lease_ttl: 1h\nhitl: {enabled: false}\npolicy: {confirm_tools: []}\nmemory: {enabled: false}\n"})
	admin, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for round := range 3 {
		title := fmt.Sprintf("drop r%d", round)
		plan := strings.ReplaceAll(takeoverPlan, "TITLE", title)
		out, err := tryTool(ctx, srv.url, token, "execute", map[string]any{"plan": json.RawMessage(plan)})
		if err != nil || out["status"] != "completed" {
			t.Fatalf("round %d: %v %v", round, out, err)
		}
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1`, db).Scan(&n); err != nil || n == 0 {
			t.Fatalf("terminated %d backends: %v", n, err)
		}
		testwait.For(t, time.Minute, func() error { // the backends are gone, their sockets closed
			var left int
			if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, db).Scan(&left); err != nil || left > 0 {
				return fmt.Errorf("%d backends left (%v)", left, err)
			}
			return nil
		})
	}
}
