package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/internal/pgtest"
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
	for round := range 3 {
		title := fmt.Sprintf("drop r%d", round)
		plan := strings.ReplaceAll(takeoverPlan, "TITLE", title)
		out, err := tryTool(ctx, srv.url, token, "execute", map[string]any{"plan": json.RawMessage(plan)})
		if err != nil || out["status"] != "completed" {
			t.Fatalf("round %d: %v %v", round, out, err)
		}
		if n := pgtest.Terminate(t, "datname", db); n == 0 {
			t.Fatal("no session of the server's to terminate")
		}
	}
}
