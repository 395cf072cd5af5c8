package sheets_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/host/hosttest"
)

// TestThroughHost runs the real ordo-plugin-sheets binary under the host.
func TestThroughHost(t *testing.T) {
	bin := hosttest.Build(t, "sheets")
	base := t.TempDir()
	root := filepath.Join(base, "sheets")
	os.Mkdir(root, 0o755)
	os.WriteFile(filepath.Join(root, "team.csv"), []byte("name,role\nAna,dev\nLee,ops\n"), 0o644)
	os.WriteFile(filepath.Join(base, "secret.csv"), []byte("k\nv\n"), 0o644)
	p := hosttest.Start(t, bin, "sheets", filepath.Join(base, "ordo"), map[string]string{"ORDO_SHEETS_ROOT": root})
	if got := p.Call("sheets.get_range", map[string]any{"file": "team.csv", "range": "A2:A3"}, ""); got["range"] != "A2:A3" {
		t.Fatalf("get_range = %v", got)
	}
	q := p.Call("sheets.query", map[string]any{"file": "team.csv", "where": "role = ops", "select": []string{"name"}}, "")
	if recs := q["records"].([]any); len(recs) != 1 || recs[0].(map[string]any)["name"] != "Lee" {
		t.Fatalf("query = %v", q)
	}
	p.Refused("sheets.query", map[string]any{"file": "../secret.csv"}, "", "file")
	p.Refused("sheets.get_range", map[string]any{"file": "team.csv", "range": "A0"}, "", "range")
}
