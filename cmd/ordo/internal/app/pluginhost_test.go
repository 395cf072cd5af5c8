package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/pgtest"
	"github.com/ordo-run/ordo/memory/postgres"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// TestCallTimeoutFromConfig: plugin_host.call_timeout bounds a tool whose
// contract sets no timeout_ms. The tool answers after 10 s; with the
// host's default (20 s) the call would succeed.
func TestCallTimeoutFromConfig(t *testing.T) {
	a := open(t, load(t, "plugin_host:\n  call_timeout: 50ms\n"))
	prov, err := host.InProcess(sdk.Tool{
		Contract: contracts.Contract{
			Tool: "slow.wait", Service: "slow", RiskLevel: contracts.RiskRead, Description: "Wait a while.",
			InputSchema:  json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"object"}`),
		},
		Handler: func(ctx context.Context, _ sdk.Call) (any, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Second):
				return map[string]any{}, nil
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Host.AddProvider(context.Background(), "slow", "test", prov); err != nil {
		t.Fatal(err)
	}
	_, err = a.Host.Call(context.Background(), "slow.wait", json.RawMessage(`{}`), "k")
	if contracts.CodeOf(err) != contracts.CodeToolTimeout {
		t.Fatalf("call past plugin_host.call_timeout: %v, want code %d", err, contracts.CodeToolTimeout)
	}
}

// TestPostgresOptionsFromConfig: postgres.auto_migrate false refuses an
// unmigrated database until `ordo migrate` (Migrate) ran, and
// postgres.max_conns sizes the pool.
func TestPostgresOptionsFromConfig(t *testing.T) {
	dsn, _ := pgtest.Database(t, "ordo_app_")
	cfg := load(t, "store: "+dsn+"\npostgres:\n  max_conns: 2\n  auto_migrate: false\n")
	ctx := context.Background()
	if _, err := OpenStore(ctx, cfg); contracts.CodeOf(err) != contracts.CodeStore || !strings.Contains(err.Error(), "ordo migrate") {
		t.Fatalf("unmigrated database with auto_migrate off: %v", err)
	}
	if _, err := Migrate(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := st.(*postgres.Store).Pool().Config().MaxConns; n != 2 {
		t.Fatalf("pool max conns %d, want postgres.max_conns 2", n)
	}
}
