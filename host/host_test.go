package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host/internal/testtools"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/internal/testwait"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newHost(t *testing.T, opts ...Option) *Host {
	t.Helper()
	base := []Option{WithLogger(quietLogger()), WithDataDir(t.TempDir()),
		WithRetry(RetryPolicy{MaxAttempts: 3, BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond})}
	h, err := New(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// addBuiltin adds the test tools to h in process, as source "builtin" at
// version v1, and returns their provider.
func addBuiltin(tb testing.TB, h *Host) ToolProvider {
	tb.Helper()
	p, err := InProcess(testtools.Tools()...)
	if err == nil {
		err = h.AddProvider(context.Background(), "builtin", "v1", p)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestPluginCalls(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	if err := h.AddPlugin(ctx, PluginSpec{Name: "test", Path: testPluginBin, SHA256: sha(t, testPluginBin)}); err != nil {
		t.Fatal(err)
	}
	if got := len(h.List()); got != 5 {
		t.Fatalf("List has %d tools, want 5", got)
	}

	t.Run("idempotency key reaches the plugin", func(t *testing.T) {
		out, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":"hi"}`), "run1/a1")
		if err != nil {
			t.Fatal(err)
		}
		var res struct{ Text, Key string }
		if err := json.Unmarshal(out, &res); err != nil || res.Text != "hi" || res.Key != "run1/a1" {
			t.Fatalf("result %s (%v)", out, err)
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		_, err := h.Call(ctx, "test.nope", json.RawMessage(`{}`), "")
		testerr.Code(t, err, contracts.CodeUnknownTool)
	})
	t.Run("input schema violation", func(t *testing.T) {
		_, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":5}`), "")
		testerr.Code(t, err, contracts.CodeSchemaViolation)
		_, err = h.Call(ctx, "test.echo", json.RawMessage(`{"text":`), "")
		testerr.Code(t, err, contracts.CodeSchemaViolation)
	})
	t.Run("retryable errors are retried", func(t *testing.T) {
		out, err := h.Call(ctx, "test.flaky", json.RawMessage(`{"id":"a","failures":2}`), "k")
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != `{"attempts":3}` {
			t.Fatalf("result %s", out)
		}
		_, err = h.Call(ctx, "test.flaky", json.RawMessage(`{"id":"b","failures":5}`), "k")
		ce := testerr.Code(t, err, contracts.CodeToolFailed)
		if !ce.Retryable || ce.Details["attempts"] != 3 {
			t.Fatalf("want retryable after 3 attempts, got %+v", ce)
		}
	})
	t.Run("contract timeout", func(t *testing.T) {
		_, err := h.Call(ctx, "test.sleep", json.RawMessage(`{"ms":3000}`), "")
		testerr.Code(t, err, contracts.CodeToolTimeout)
	})
	t.Run("ctx deadline shorter than the contract wins", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err := h.Call(cctx, "test.sleep", json.RawMessage(`{"ms":250}`), "")
		// The error names the deadline that fired, not the contract's.
		if ce := testerr.Code(t, err, contracts.CodeToolTimeout); ce.Details["timeout_ms"].(int64) > 50 {
			t.Fatalf("timeout_ms %v, want at most the caller's 50", ce.Details["timeout_ms"])
		}
	})
	t.Run("invalid output", func(t *testing.T) {
		_, err := h.Call(ctx, "test.wrong", json.RawMessage(`{}`), "")
		testerr.Code(t, err, contracts.CodeToolInvalidOutput)
	})
	t.Run("panic is a tool failure and the plugin lives", func(t *testing.T) {
		_, err := h.Call(ctx, "test.panic", json.RawMessage(`{}`), "")
		ce := testerr.Code(t, err, contracts.CodeToolFailed)
		if ce.Retryable {
			t.Fatal("a panic must not be retryable")
		}
		if _, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":"still here"}`), ""); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("source and version", func(t *testing.T) {
		src, ok := h.Source("test.echo")
		if !ok || src.Provider != "test" || src.Version == "" {
			t.Fatalf("source %+v", src)
		}
	})
}

func TestRoguePlugins(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	if err := h.AddPlugin(ctx, PluginSpec{Name: "test", Path: testPluginBin}); err != nil {
		t.Fatal(err)
	}
	t.Run("garbage output", func(t *testing.T) {
		if err := h.AddPlugin(ctx, PluginSpec{Name: "rogue", Path: roguePluginBin, Env: map[string]string{"ROGUE_MODE": "garbage"}}); err != nil {
			t.Fatal(err)
		}
		_, err := h.Call(ctx, "rogue.get", json.RawMessage(`{}`), "")
		testerr.Code(t, err, contracts.CodeToolInvalidOutput)
		if err := h.RemoveSource(ctx, "rogue"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("broken contract", func(t *testing.T) {
		err := h.AddPlugin(ctx, PluginSpec{Name: "broken", Path: roguePluginBin, Env: map[string]string{"ROGUE_MODE": "broken"}})
		testerr.Code(t, err, contracts.CodeInvalidContract)
	})
	t.Run("protocol mismatch", func(t *testing.T) {
		err := h.AddPlugin(ctx, PluginSpec{Name: "v2", Path: roguePluginBin, Env: map[string]string{"ROGUE_MODE": "v2"}})
		testerr.Code(t, err, contracts.CodeProtocolMismatch)
	})
	t.Run("checksum mismatch", func(t *testing.T) {
		err := h.AddPlugin(ctx, PluginSpec{Name: "bad-sum", Path: testPluginBin, SHA256: sha(t, roguePluginBin)})
		testerr.Code(t, err, contracts.CodeChecksumMismatch)
	})
	t.Run("tools outside its namespace", func(t *testing.T) {
		err := h.AddPlugin(ctx, PluginSpec{Name: "again", Path: testPluginBin})
		if ce := testerr.Code(t, err, contracts.CodePluginRefused); ce.Details["plugin"] != "again" || ce.Details["tool"] == nil {
			t.Fatalf("details %v", ce.Details)
		}
	})
	for _, p := range h.Sources() {
		if p.Name != "test" {
			t.Errorf("refused plugin %q left behind: %+v", p.Name, p)
		}
	}
	if _, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":"ok"}`), ""); err != nil {
		t.Fatalf("the good plugin was disturbed: %v", err)
	}
}

func TestKillDuringCall(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	if err := h.AddPlugin(ctx, PluginSpec{Name: "test", Path: testPluginBin}); err != nil {
		t.Fatal(err)
	}
	pid := h.Sources()[0].PID
	if pid == 0 {
		t.Fatal("no pid")
	}
	errc := make(chan error, 1)
	go func() {
		_, err := h.Call(ctx, "test.sleep", json.RawMessage(`{"ms":280}`), "")
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond) // let the call reach the plugin
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testerr.Code(t, <-errc, contracts.CodeToolCrashed)

	testwait.For(t, 5*time.Second, func() error {
		p := h.Sources()[0]
		if p.State != StateRunning || p.PID == pid || p.PID == 0 {
			return fmt.Errorf("plugin not back: %+v", p)
		}
		if p.Restarts < 1 {
			t.Fatalf("restarts %d", p.Restarts)
		}
		return nil
	})
	if _, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":"back"}`), ""); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatal("the killed process still exists")
	}
}

func TestInProcessProvider(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	p := addBuiltin(t, h)
	out, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":"in"}`), "k1")
	if err != nil || string(out) != `{"key":"k1","text":"in"}` {
		t.Fatalf("%s %v", out, err)
	}
	_, err = h.Call(ctx, "test.wrong", json.RawMessage(`{}`), "")
	testerr.Code(t, err, contracts.CodeToolInvalidOutput)
	// The payload is checked before the tool runs (the SDK leaves it to
	// the host): echo would otherwise fail decoding a number as text.
	_, err = h.Call(ctx, "test.echo", json.RawMessage(`{"text":5}`), "")
	if ce := testerr.Code(t, err, contracts.CodeSchemaViolation); ce.Details["instance_location"] != "/text" {
		t.Fatalf("details %v", ce.Details)
	}
	// A call's own retry policy replaces the host's.
	_, err = h.Call(ctx, "test.flaky", json.RawMessage(`{"id":"once","failures":1}`), "k", WithRetries(RetryPolicy{MaxAttempts: 1}))
	if ce := testerr.Code(t, err, contracts.CodeToolFailed); !ce.Retryable || ce.Details["attempts"] != nil {
		t.Fatalf("one attempt: %+v", ce)
	}
	out, err = h.Call(ctx, "test.flaky", json.RawMessage(`{"id":"five","failures":4}`), "k", WithRetries(RetryPolicy{MaxAttempts: 5}))
	if err != nil || string(out) != `{"attempts":5}` {
		t.Fatalf("five attempts: %s %v", out, err)
	}
	err = h.AddProvider(ctx, "builtin", "v1", p)
	testerr.Code(t, err, contracts.CodePluginRefused)
	if err := h.RemoveSource(ctx, "builtin"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Lookup("test.echo"); ok {
		t.Fatal("tool still there after removal")
	}
	testerr.Code(t, h.RemoveSource(ctx, "builtin"), contracts.CodeInvalidInput)
}

func TestOptionsRefused(t *testing.T) {
	_, err := New(WithDefaultTimeout(0))
	ce := testerr.Code(t, err, contracts.CodeInvalidConfig)
	if ce.Details["field"] != "default_timeout" {
		t.Fatalf("details %v", ce.Details)
	}
}
