package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testwait"
)

// describedContracts are the contracts the test plugin describes, with
// test.echo's description replaced by desc, so a test can tell a listing
// from known contracts from one the plugin described.
func describedContracts(t *testing.T, desc string) []contracts.Contract {
	t.Helper()
	h := startHost(t, t.TempDir(), PluginSpec{Name: "test", Path: testPluginBin})
	var cs []contracts.Contract
	for _, tool := range h.List() {
		c := tool.Contract
		if c.Tool == "test.echo" {
			c.Description = desc
		}
		cs = append(cs, c)
	}
	h.Close()
	return cs
}

// TestKnownContractsListedBeforeStart: a plugin trusted as found whose
// contracts are known (the bundled ones) is listed by New from them on a
// data directory that has never seen it, before its binary is hashed or
// its process started; a call waits for the real process, pinned; what
// the process describes replaces the known listing and is cached.
func TestKnownContractsListedBeforeStart(t *testing.T) {
	data := t.TempDir()
	bin := filepath.Join(t.TempDir(), "plug")
	copyExec(t, testPluginBin, bin)
	spec := PluginSpec{Name: "test", Path: bin, PinFound: true, Contracts: describedContracts(t, "known")}
	gate := make(chan struct{})
	defer close(gate)
	h, err := New(WithLogger(quietLogger()), WithDataDir(data), WithPlugins(spec), WithStartGate(gate), WithStartTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got := echoDescription(t, h); got != "known" {
		t.Fatalf("New listed test.echo as %q; want the known contract", got)
	}
	if p := h.Sources(); len(p) != 1 || p[0].State != StateStarting || p[0].PID != 0 || p[0].SHA256 != "" {
		t.Fatalf("plugins %+v, want test listed, starting, not yet pinned", p)
	}
	if h.sums.known(bin, sha(t, bin)) {
		t.Fatal("the binary was hashed before the first list")
	}
	events := h.Subscribe(t.Context())
	for range len(h.List()) {
		<-events // the current tools
	}
	out, err := h.Call(context.Background(), "test.echo", json.RawMessage(`{"text":"hi"}`), "k")
	if err != nil || string(out) != `{"key":"k","text":"hi"}` {
		t.Fatalf("call while starting: %s %v", out, err)
	}
	if p := h.Sources(); p[0].State != StateRunning || p[0].PID == 0 || p[0].SHA256 != sha(t, bin) {
		t.Fatalf("plugins %+v after the call", p)
	}
	if ev := <-events; ev.Kind != Changed || ev.Tool != "test.echo" || ev.Contract.Description == "known" {
		t.Fatalf("event %+v, want test.echo changed to what the plugin describes", ev)
	}
	testwait.Until(t, 30*time.Second, "what the plugin described cached", func() bool {
		e, ok := newContractCache(data).valid(spec)
		if !ok || e.SHA256 != sha(t, bin) {
			return false
		}
		cs, err := e.contracts()
		return err == nil && !slices.ContainsFunc(cs, func(c contracts.Contract) bool { return c.Description == "known" })
	})
}

// TestKnownContractsOfAMissingBinary: a plugin listed from known contracts
// whose binary cannot be pinned is refused in the background as one that
// cannot start: its tools leave the catalog and a call fails unavailable.
func TestKnownContractsOfAMissingBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "plug")
	if err := os.WriteFile(bin, []byte("not a program"), 0o600); err != nil { // not executable
		t.Fatal(err)
	}
	h := startHost(t, t.TempDir(), PluginSpec{Name: "test", Path: bin, PinFound: true, Contracts: describedContracts(t, "known")})
	callRefused(t, h, "not an executable file")
	if _, ok := h.Lookup("test.echo"); ok {
		t.Fatal("the tools of a plugin that cannot be pinned are still listed")
	}
}
