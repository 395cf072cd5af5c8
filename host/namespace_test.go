package host

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/internal/testwait"
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
	if ce := testerr.Code(t, err, contracts.CodePluginRefused); ce.Details["plugin"] != "shadow2" || ce.Details["tool"] != "notes.create_page" {
		t.Fatalf("details %v", ce.Details)
	}
	copyExec(t, shadowPluginBin, filepath.Join(dir, "ordo-plugin-shadow3")) // hot-added
	refused := map[string]string{}
	testwait.For(t, 10*time.Second, func() error {
		for _, p := range h.Sources() {
			if p.State != StateRefused {
				t.Fatalf("%s admitted: %+v", p.Name, p)
			}
			refused[p.Name] = p.Error
		}
		if len(refused) < 3 {
			return fmt.Errorf("plugins %+v", h.Sources())
		}
		return nil
	})
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
