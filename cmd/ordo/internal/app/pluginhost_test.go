package app

import (
	"context"
	"encoding/json"
	"fmt"
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
	addTool(t, a, "slow.wait", func(ctx context.Context, _ sdk.Call) (any, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return map[string]any{}, nil
		}
	})
	_, err := a.Host.Call(context.Background(), "slow.wait", json.RawMessage(`{}`), "k")
	if contracts.CodeOf(err) != contracts.CodeToolTimeout {
		t.Fatalf("call past plugin_host.call_timeout: %v, want code %d", err, contracts.CodeToolTimeout)
	}
}

// TestRetryFromConfig: plugin_host.retry.attempts is how often the host
// tries a call that fails with a retryable error, under one key.
func TestRetryFromConfig(t *testing.T) {
	for _, attempts := range []int{1, 4} {
		a := open(t, load(t, fmt.Sprintf("plugin_host:\n  retry: {attempts: %d, backoff: {min: 1ms, max: 2ms}}\n", attempts)))
		var keys []string
		addTool(t, a, "flaky.get", func(_ context.Context, c sdk.Call) (any, error) {
			keys = append(keys, c.IdempotencyKey)
			return nil, sdk.ToolError(true, "try again")
		})
		if _, err := a.Host.Call(context.Background(), "flaky.get", json.RawMessage(`{}`), "k"); err == nil {
			t.Fatal("a failing call succeeded")
		}
		if len(keys) != attempts || keys[len(keys)-1] != "k" {
			t.Fatalf("attempts %d: calls %v", attempts, keys)
		}
	}
}

// addTool adds an in-process read tool NAME (service: NAME's prefix) that
// takes and returns any object, answered by h.
func addTool(t *testing.T, a *App, name string, h sdk.Handler) {
	t.Helper()
	service, _, _ := strings.Cut(name, ".")
	prov, err := host.InProcess(sdk.Tool{Contract: contracts.Contract{
		Tool: name, Service: service, RiskLevel: contracts.RiskRead, Description: "A test tool.",
		InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`),
	}, Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Host.AddProvider(context.Background(), service, "test", prov); err != nil {
		t.Fatal(err)
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
