package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/internal/testwait"
)

// Issue 13: a plugin SIGKILLed between two calls. The next call never
// reaches the dead process, so it must not fail as a crash (6002, not
// retryable): it waits for the restart and is issued then.
func TestCallAfterPluginDied(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	if err := h.AddPlugin(ctx, PluginSpec{Name: "test", Path: testPluginBin}); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		pid := h.Sources()[0].PID
		if _, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":"before"}`), ""); err != nil {
			t.Fatalf("round %d, before the kill: %v", round, err)
		}
		killAndReap(t, pid)
		out, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":"after"}`), "k")
		if err != nil {
			t.Fatalf("round %d, the call after the kill: %v", round, err)
		}
		if string(out) != `{"key":"k","text":"after"}` {
			t.Fatalf("round %d: result %s", round, out)
		}
		if p := h.Sources()[0]; p.PID == pid || p.Restarts != round+1 {
			t.Fatalf("round %d: the call was not served by a restarted plugin: %+v", round, p)
		}
	}
}

// A plugin that cannot come back (its binary changed, so the restart is
// refused): the call after its death fails with 6004, retryable.
func TestCallAfterPluginDiedForGood(t *testing.T) {
	h := newHost(t)
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "ordo-plugin-test")
	copyExec(t, testPluginBin, bin)
	if err := h.AddPlugin(ctx, PluginSpec{Name: "test", Path: bin}); err != nil {
		t.Fatal(err)
	}
	copyExec(t, roguePluginBin, bin) // the running process keeps the old file
	killAndReap(t, h.Sources()[0].PID)
	_, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":"after"}`), "")
	if ce := testerr.Code(t, err, contracts.CodeToolUnavailable); !ce.Retryable {
		t.Fatalf("6004 must be retryable: %+v", ce)
	}
	if p := h.Sources()[0]; p.State != StateFailed {
		t.Fatalf("plugin %+v, want failed", p)
	}
}

// A plugin that is not back within the call's deadline: 6004 (the call
// never reached it), not a timeout.
func TestCallAfterPluginDiedNotBackInTime(t *testing.T) {
	h := newHost(t, WithRestartBackoff(time.Minute, time.Minute))
	ctx := context.Background()
	if err := h.AddPlugin(ctx, PluginSpec{Name: "test", Path: testPluginBin}); err != nil {
		t.Fatal(err)
	}
	killAndReap(t, h.Sources()[0].PID)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err := h.Call(cctx, "test.echo", json.RawMessage(`{"text":"after"}`), "")
	if ce := testerr.Code(t, err, contracts.CodeToolUnavailable); !ce.Retryable {
		t.Fatalf("6004 must be retryable: %+v", ce)
	}
}

// killAndReap SIGKILLs pid and returns once the host has reaped it, so the
// next call is made to a process that is already gone.
func killAndReap(t *testing.T, pid int) {
	t.Helper()
	if pid == 0 {
		t.Fatal("no pid")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, fmt.Sprintf("process %d reaped", pid), func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
}
