package recommender

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/contracts"
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

// benchTools reads the tools of the data set named set (seal-tools,
// metatool) from benchData.
func benchTools(tb testing.TB, set string) []contracts.Contract {
	return benchRead(tb, set, "tools.jsonl", ReadTools)
}

// benchQueries reads the dev queries of the data set named set.
func benchQueries(tb testing.TB, set string) []QueryRecord {
	return benchRead(tb, set, "queries-dev.jsonl", ReadQueries)
}

func benchRead[T any](tb testing.TB, set, name string, parse func(io.Reader) ([]T, error)) []T {
	tb.Helper()
	out, err := readFile(filepath.Join(benchData(tb), set, name), parse)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
