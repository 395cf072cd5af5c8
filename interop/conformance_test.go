package interop_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordo-run/ordo/internal/npmtest"
)

// TestConformance runs .ci/conformance.sh: the official MCP conformance
// suite against `ordo serve --http`, where only the scenarios calling the
// suite's own fixtures (interop/conformance/expected-failures.yml) may
// fail, and a listed scenario that starts passing fails too. The script
// fetches Node 22 and the suite through npm the first time (cached in
// $ORDO_INTEROP_CACHE). It runs whenever node and npm are installed, like
// the TypeScript SDK test; -short skips it.
func TestConformance(t *testing.T) {
	needNode(t)
	if testing.Short() {
		t.Skip("skipped in -short mode: the MCP conformance suite takes about 15 s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, ".ci", "conformance.sh"))
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "ORDO_INTEROP_CACHE="+npmtest.CacheDir(t, ""))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
