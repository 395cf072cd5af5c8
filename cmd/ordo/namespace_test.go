package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/internal/testbuild"
)

// Issue 13: `ordo plugins add` refuses a plugin whose tools are outside
// its own namespace (a "shadow" plugin describing notes.create_page) with
// code 6005 and installs nothing; under the name "notes" it would be
// admitted, but that is a bundled plugin's name.
func TestPluginsAddRefusesForeignNamespace(t *testing.T) {
	t.Parallel()
	shadow := filepath.Join(t.TempDir(), "ordo-plugin-shadow")
	if err := testbuild.Build(shadow, "./host/testdata/shadowplugin"); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	r := e.ordo("", "plugins", "add", shadow)
	r.want(t, 1)
	if !strings.Contains(r.stderr, "error 6005") || !strings.Contains(r.stderr, "notes.create_page") {
		t.Errorf("stderr does not give the code and the tool:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.data, "plugins.d", "shadow")); !os.IsNotExist(err) {
		t.Errorf("the refused plugin was installed (%v)", err)
	}
	r = e.ordo("", "tools", "list")
	r.want(t, 0)
	if !strings.Contains(r.stdout, "notes.create_page") || strings.Contains(r.stdout, "shadow") {
		t.Errorf("tools after the refusal:\n%s", r.stdout)
	}
}
