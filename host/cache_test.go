package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testwait"
)

// startHost is New with the test's quiet options and plugins declared in
// configuration, closed at the end of the test.
func startHost(t *testing.T, data string, specs ...PluginSpec) *Host {
	t.Helper()
	h, err := New(WithLogger(quietLogger()), WithDataDir(data), WithStartTimeout(30*time.Second), WithPlugins(specs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func echoDescription(t *testing.T, h *Host) string {
	t.Helper()
	tool, ok := h.Lookup("test.echo")
	if !ok {
		t.Fatalf("test.echo is not listed: %v", h.Sources())
	}
	return tool.Contract.Description
}

// editCache rewrites the description of test.echo in plugin name's cache
// entry, keeping the entry valid, so the test can tell a listing served
// from the cache from one the plugin described.
func editCache(t *testing.T, data, name, desc string) {
	t.Helper()
	file := filepath.Join(data, "plugin-contracts", name+".json")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var e cacheEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	for i, c := range e.Contracts {
		var ct contracts.Contract
		if err := json.Unmarshal(c, &ct); err != nil {
			t.Fatal(err)
		}
		if ct.Tool == "test.echo" {
			ct.Description = desc
			e.Contracts[i], _ = json.Marshal(ct)
		}
	}
	raw, _ = json.Marshal(e)
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestStartFromCachedContracts: a plugin started once is listed at the
// next New from its cached contracts before its process is up; calls wait
// for the process, and what it describes replaces the cached listing. A
// binary rewritten since (a new checksum) is never listed from the cache.
func TestStartFromCachedContracts(t *testing.T) {
	data := t.TempDir()
	bin := filepath.Join(t.TempDir(), "testplugin")
	copyExec(t, testPluginBin, bin)
	spec := PluginSpec{Name: "test", Path: bin}
	h := startHost(t, data, spec)
	real := echoDescription(t, h)
	h.Close()

	editCache(t, data, "test", "from the cache")
	h = startHost(t, data, spec)
	if got := echoDescription(t, h); got != "from the cache" {
		t.Fatalf("New listed test.echo as %q; want the cached listing", got)
	}
	if !h.Available("test.echo") {
		t.Fatal("a starting plugin's tools are unavailable; calls to them wait")
	}
	out, err := h.Call(context.Background(), "test.echo", json.RawMessage(`{"text":"hi"}`), "k")
	if err != nil || string(out) != `{"key":"k","text":"hi"}` {
		t.Fatalf("call while starting: %s %v", out, err)
	}
	testwait.Until(t, 30*time.Second, "the plugin's own description replaces the cached one", func() bool { return echoDescription(t, h) == real })
	if p := h.Sources(); len(p) != 1 || p[0].State != StateRunning || p[0].SHA256 != sha(t, bin) {
		t.Fatalf("plugins %+v", p)
	}
	h.Close()

	// The same bytes written again: a new file, so the entry no longer
	// describes it and New starts the plugin before listing it.
	editCache(t, data, "test", "stale")
	copyExec(t, testPluginBin, bin)
	h = startHost(t, data, spec)
	if got := echoDescription(t, h); got != real {
		t.Fatalf("after the binary changed, New listed test.echo as %q", got)
	}
	h.Close()

	// A checksum in the spec that the cached binary does not have: refused
	// as before, not listed from the cache.
	h = startHost(t, data, PluginSpec{Name: "test", Path: bin, SHA256: sha(t, roguePluginBin)})
	if _, ok := h.Lookup("test.echo"); ok {
		t.Fatal("a plugin whose checksum does not match was listed")
	}
	if p := h.Sources(); len(p) != 1 || p[0].State != StateRefused {
		t.Fatalf("plugins %+v", p)
	}
}

// TestCachedPluginThatCannotStart: a plugin listed from the cache whose
// process then fails to start is refused as New would refuse it: its tools
// leave the catalog, the waiting call fails as unavailable and the cache
// entry is dropped.
func TestCachedPluginThatCannotStart(t *testing.T) {
	data := t.TempDir()
	bin := filepath.Join(t.TempDir(), "plug")
	copyExec(t, testPluginBin, bin)
	spec := PluginSpec{Name: "test", Path: bin, Env: map[string]string{"X": "1"}}
	h := startHost(t, data, spec)
	h.Close()
	// Forge an entry for the rogue binary speaking protocol 2, as the
	// cache would hold for a plugin that started before.
	e, ok := newContractCache(data).valid(spec)
	if !ok {
		t.Fatal("no cache entry after a start")
	}
	rogue := filepath.Join(t.TempDir(), "plug")
	copyExec(t, roguePluginBin, rogue)
	spec = PluginSpec{Name: "test", Path: rogue, Env: map[string]string{"ROGUE_MODE": "v2"}}
	e.Path, e.SHA256, e.Setup = rogue, sha(t, rogue), setupHash(spec)
	e.Stamp, _ = stampOf(rogue)
	raw, _ := json.Marshal(e)
	if err := os.WriteFile(filepath.Join(data, "plugin-contracts", "test.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	h = startHost(t, data, spec)
	var wg sync.WaitGroup
	var callErr error
	if _, ok := h.Lookup("test.echo"); ok {
		wg.Go(func() { _, callErr = h.Call(context.Background(), "test.echo", json.RawMessage(`{"text":"hi"}`), "") })
	}
	testwait.Until(t, 30*time.Second, "the tools of a plugin that cannot start leave the catalog", func() bool { _, ok := h.Lookup("test.echo"); return !ok })
	wg.Wait()
	if callErr != nil {
		if c := contracts.CodeOf(callErr); c != contracts.CodeToolUnavailable && c != contracts.CodeUnknownTool {
			t.Fatalf("waiting call: %v", callErr)
		}
	}
	if p := h.Sources(); len(p) != 1 || p[0].State != StateRefused {
		t.Fatalf("plugins %+v", p)
	}
	if _, err := os.Stat(filepath.Join(data, "plugin-contracts", "test.json")); !os.IsNotExist(err) {
		t.Fatalf("cache entry kept: %v", err)
	}
}

// TestForgedCacheStartsNothing: a cache entry written for a binary that
// is not the one its configured checksum names (someone who can write the
// data directory replaced the binary and the entry) lists its tools at
// most until the process is due to start; the bytes executed are checked
// against the configured checksum, the plugin is refused and nothing it
// serves is ever called. A bundled plugin (trusted as found, PinFound)
// starts on the entry's word: there the checksum only names what was found.
func TestForgedCacheStartsNothing(t *testing.T) {
	data := t.TempDir()
	bin := filepath.Join(t.TempDir(), "plug")
	copyExec(t, testPluginBin, bin)
	want := sha(t, bin)
	spec := PluginSpec{Name: "test", Path: bin, SHA256: want}
	h := startHost(t, data, spec)
	h.Close()
	e, ok := newContractCache(data).valid(spec)
	if !ok {
		t.Fatal("no cache entry after a start")
	}
	copyExec(t, roguePluginBin, bin)
	e.Stamp, _ = stampOf(bin) // the entry now claims the new file has the old checksum
	raw, _ := json.Marshal(e)
	if err := os.WriteFile(filepath.Join(data, "plugin-contracts", "test.json"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	h = startHost(t, data, spec)
	callRefused(t, h, "checksum")
	h.Close()

	// Bundled: pinned to what the entry says was found, and started.
	copyExec(t, testPluginBin, bin)
	spec = PluginSpec{Name: "test", Path: bin, PinFound: true}
	startHost(t, data, spec).Close() // a start writes the entry
	h = startHost(t, data, spec)
	if out, err := h.Call(context.Background(), "test.echo", json.RawMessage(`{"text":"hi"}`), "k"); err != nil || string(out) != `{"key":"k","text":"hi"}` {
		t.Fatalf("bundled plugin from the cache: %s %v", out, err)
	}
	if p := h.Sources(); p[0].SHA256 != want || !h.sums.known(bin, want) {
		t.Fatalf("plugins %+v", p)
	}
}

// callRefused calls test.echo of a plugin listed but unable to start:
// the call fails as unavailable (unknown once the plugin is refused), and
// the plugin ends refused for a reason that names why.
func callRefused(t *testing.T, h *Host, why string) {
	t.Helper()
	_, err := h.Call(context.Background(), "test.echo", json.RawMessage(`{"text":"hi"}`), "")
	if c := contracts.CodeOf(err); c != contracts.CodeToolUnavailable && c != contracts.CodeUnknownTool {
		t.Fatalf("a call to a plugin that cannot start: %v", err)
	}
	testwait.Until(t, 30*time.Second, "the plugin refused", func() bool {
		p := h.Sources()
		return len(p) == 1 && p[0].State == StateRefused
	})
	if p := h.Sources(); !strings.Contains(p[0].Error, why) {
		t.Fatalf("refused for %q, want %q", p[0].Error, why)
	}
}

// TestStartGate: with a start gate, a plugin listed from the cache starts
// no process until the gate opens or a call needs it; the call starts it
// and is answered, gate still closed.
func TestStartGate(t *testing.T) {
	data := t.TempDir()
	spec := PluginSpec{Name: "test", Path: testPluginBin}
	startHost(t, data, spec).Close() // a start writes the cache entry
	gate := make(chan struct{})
	h, err := New(WithLogger(quietLogger()), WithDataDir(data), WithPlugins(spec), WithStartGate(gate))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if p := h.Sources(); len(p) != 1 || p[0].State != StateStarting || p[0].PID != 0 {
		t.Fatalf("plugins %+v, want test listed from the cache and starting", p)
	}
	// Without the call's wake-up it would wait for the gate until ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":"hi"}`), "k")
	if err != nil || string(out) != `{"key":"k","text":"hi"}` {
		t.Fatalf("call behind the gate: %s %v", out, err)
	}
	if p := h.Sources(); p[0].State != StateRunning || p[0].PID == 0 {
		t.Fatalf("plugins %+v after the call", p)
	}

	// Without a call the gate starts it.
	h2, err := New(WithLogger(quietLogger()), WithDataDir(data), WithPlugins(spec), WithStartGate(gate))
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	close(gate)
	testwait.Until(t, 30*time.Second, "the plugin started once the gate opened", func() bool {
		p := h2.Sources()
		return p[0].State == StateRunning
	})
}
