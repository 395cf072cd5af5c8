package sheets

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/plugins/internal/plugintest"
)

// BenchmarkQuery10k measures sheets.query over a 10,000-row CSV: load,
// parse, filter on two conditions, project two columns, limit 100.
func BenchmarkQuery10k(b *testing.B) {
	root := b.TempDir()
	var sb strings.Builder
	sb.WriteString("id,region,rep,revenue,status\n")
	regions := []string{"EMEA", "APAC", "AMER"}
	for i := range 10000 {
		fmt.Fprintf(&sb, "%d,%s,rep%d,%d.%02d,%s\n", i, regions[i%3], i%97, i*7%20000, i%100, []string{"won", "lost", "open"}[i%3])
	}
	os.WriteFile(filepath.Join(root, "big.csv"), []byte(sb.String()), 0o644)
	tools, err := Tools(Config{Root: root})
	s := plugintest.Server(b, tools, err)
	args := map[string]any{"file": "big.csv", "where": "region = EMEA and revenue >= 10000", "select": []string{"id", "rep"}, "limit": 100}
	for b.Loop() {
		s.Call("sheets.query", args, "")
	}
}
