package app

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testbuild"
)

// A third-party plugin named llm, describing llm.* tools, in plugins_dir
// (where `ordo plugins add --name llm` put it, before the name was kept)
// neither takes the name of Ordo's built-in llm tools nor keeps Ordo from
// opening: it is refused, and llm.generate is the built-in one. The
// configuration refuses the name for a plugin or an upstream.
func TestPluginCannotTakeBuiltinLLMName(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "ordo-plugin-llm")
	if err := testbuild.Build(bin, "./host/testdata/rogueplugin"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin+".json", []byte(`{"env":{"ROGUE_SERVICE":"llm"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := load(t, "llm:\n  base_url: http://127.0.0.1:1/v1\n  model: m\n")
	cfg.Bundled.Enabled = false
	cfg.PluginsDir = dir
	a, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler), Options{Env: envOf()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if src, ok := a.Host.Source("llm.generate"); !ok || src.Version != "builtin" {
		t.Fatalf("llm.generate from %+v", src)
	}
	if _, ok := a.Host.Lookup("llm.get"); ok {
		t.Fatal("the plugin's llm.get is in the catalog")
	}
	for _, yaml := range []string{
		"plugins:\n  - name: llm\n    path: " + bin + "\n",
		"upstreams:\n  - name: llm\n    url: http://127.0.0.1:1/mcp\n",
	} {
		if _, err := config.Parse([]byte(yaml), t.TempDir(), envOf("HOME", t.TempDir())); contracts.CodeOf(err) != contracts.CodeInvalidConfig {
			t.Errorf("config %q: %v", yaml, err)
		}
	}
}
