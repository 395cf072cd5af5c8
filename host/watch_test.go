package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// collect reads events until pred holds for the collected list.
func collect(t *testing.T, ch <-chan CatalogEvent, got *[]CatalogEvent, pred func([]CatalogEvent) bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for !pred(*got) {
		select {
		case ev := <-ch:
			*got = append(*got, ev)
		case <-timeout:
			t.Fatalf("timed out; events so far: %+v", *got)
		}
	}
}

func count(evs []CatalogEvent, kind EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func TestHotAddRemove(t *testing.T) {
	dir := t.TempDir()
	h := newHost(t, WithPluginsDir(dir))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := h.Subscribe(ctx)

	bin := filepath.Join(dir, "ordo-plugin-test")
	copyExec(t, testPluginBin, bin)
	var got []CatalogEvent
	collect(t, events, &got, func(e []CatalogEvent) bool { return count(e, Added) == 5 })
	out, err := h.Call(ctx, "test.echo", json.RawMessage(`{"text":"hot"}`), "k")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"key":"k","text":"hot"}` {
		t.Fatalf("result %s", out)
	}
	p := h.Sources()
	if len(p) != 1 || p[0].Name != "test" || p[0].Origin != originDir {
		t.Fatalf("plugins %+v", p)
	}

	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	collect(t, events, &got, func(e []CatalogEvent) bool { return count(e, Removed) == 5 })
	if _, ok := h.Lookup("test.echo"); ok {
		t.Fatal("tool still listed after removal")
	}
	for i := 1; i < len(got); i++ {
		if got[i].Version <= got[i-1].Version {
			t.Fatalf("versions not increasing: %+v", got)
		}
	}
	if v := h.Version(); v != got[len(got)-1].Version {
		t.Fatalf("Version %d, last event %d", v, got[len(got)-1].Version)
	}
}

func TestDirRefusals(t *testing.T) {
	dir := t.TempDir()
	// A wrong checksum and a broken contract, both present before start.
	copyExec(t, testPluginBin, filepath.Join(dir, "ordo-plugin-badsum"))
	if err := os.WriteFile(filepath.Join(dir, "ordo-plugin-badsum.sha256"), []byte(sha(t, roguePluginBin)+"  ordo-plugin-badsum\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyExec(t, roguePluginBin, filepath.Join(dir, "broken"))
	manifest := `{"sha256":"` + sha(t, roguePluginBin) + `","env":{"ROGUE_MODE":"broken"}}`
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	copyExec(t, testPluginBin, filepath.Join(dir, "test"))
	if err := os.WriteFile(filepath.Join(dir, "test.sha256"), []byte(sha(t, testPluginBin)), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, WithPluginsDir(dir))
	states := map[string]SourceInfo{}
	for _, p := range h.Sources() {
		states[p.Name] = p
	}
	if states["test"].State != StateRunning {
		t.Fatalf("test: %+v", states["test"])
	}
	for name, code := range map[string]contracts.Code{"badsum": contracts.CodeChecksumMismatch, "broken": contracts.CodeInvalidContract} {
		p := states[name]
		if p.State != StateRefused || !contains(p.Error, code) {
			t.Errorf("%s: want refused with %d, got %+v", name, code, p)
		}
	}
	if _, ok := h.Lookup("rogue.get"); ok {
		t.Fatal("broken plugin's tool is in the catalog")
	}
	if _, err := h.Call(context.Background(), "test.echo", json.RawMessage(`{"text":"x"}`), ""); err != nil {
		t.Fatal(err)
	}
}

func contains(msg string, code contracts.Code) bool {
	return strings.Contains(msg, fmt.Sprintf("ordo %d:", code))
}
