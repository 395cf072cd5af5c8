package recommender

import (
	"os"
	"path/filepath"
	"testing"
)

// benchData is the shared tool-retrieval data (not copied into the repo).
// ORDO_TOOLRET overrides its location.
func benchData(t testing.TB) string {
	dir := os.Getenv("ORDO_TOOLRET")
	if dir == "" {
		dir = "/work/shared/bench/toolret"
	}
	if _, err := os.Stat(filepath.Join(dir, "seal-tools", "tools.jsonl")); err != nil {
		t.Skipf("tool-retrieval data not found in %s (set ORDO_TOOLRET): %v", dir, err)
	}
	return dir
}
