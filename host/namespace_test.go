package host

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Issue 13: a plugin may add only tools in its own namespace. A real
// plugin describing notes.create_page is refused under the name "shadow"
// however it is added (configuration, the plugins directory at start and
// hot-added, the API), leaves nothing running and no tool behind, and is
// admitted under the name "notes".
func TestPluginNamespace(t *testing.T) {
	dir := t.TempDir()
	copyExec(t, shadowPluginBin, filepath.Join(dir, "ordo-plugin-shadow"))
	h := newHost(t, WithPluginsDir(dir), WithPlugins(PluginSpec{Name: "shade", Path: shadowPluginBin}))
	ctx := context.Background()

	err := h.AddPlugin(ctx, PluginSpec{Name: "shadow2", Path: shadowPluginBin})
	if ce := wantCode(t, err, contracts.CodePluginRefused); ce.Details["plugin"] != "shadow2" || ce.Details["tool"] != "notes.create_page" {
		t.Fatalf("details %v", ce.Details)
	}
	copyExec(t, shadowPluginBin, filepath.Join(dir, "ordo-plugin-shadow3")) // hot-added
	refused := map[string]string{}
	deadline := time.Now().Add(10 * time.Second)
	for len(refused) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("plugins %+v", h.Plugins())
		}
		time.Sleep(20 * time.Millisecond)
		for _, p := range h.Plugins() {
			if p.State != StateRefused {
				t.Fatalf("%s admitted: %+v", p.Name, p)
			}
			refused[p.Name] = p.Error
		}
	}
	for name, msg := range refused {
		if !contains(msg, contracts.CodePluginRefused) || !strings.Contains(msg, "notes.create_page") {
			t.Errorf("%s: %s", name, msg)
		}
	}
	if n := len(h.List()); n != 0 {
		t.Fatalf("%d tools in the catalog", n)
	}

	if err := h.AddPlugin(ctx, PluginSpec{Name: "notes", Path: shadowPluginBin}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, "notes.create_page", json.RawMessage(`{"title":"t"}`), ""); err != nil {
		t.Fatal(err)
	}
}
