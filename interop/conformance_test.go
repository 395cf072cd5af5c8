package interop_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestConformance runs .ci/conformance.sh: the official MCP conformance
// suite against `ordo serve --http`, where only the scenarios calling the
// suite's own fixtures (interop/conformance/expected-failures.yml) may
// fail. The script fetches Node 22 and the suite through npm the first
// time (cached in $ORDO_INTEROP_CACHE).
func TestConformance(t *testing.T) {
	needNode(t)
	// Opt-in until Ordo offers prompts, completions and resource
	// subscriptions (prompts-list, completion-complete, resources-subscribe
	// and resources-unsubscribe fail today and are rightly not in the
	// expected failures); CI runs .ci/conformance.sh itself.
	if os.Getenv("ORDO_CONFORMANCE") != "1" {
		t.Skip("skipped: set ORDO_CONFORMANCE=1 to run the MCP conformance suite (or run .ci/conformance.sh)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, ".ci", "conformance.sh"))
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "ORDO_INTEROP_CACHE="+cacheDir(t, ""))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
