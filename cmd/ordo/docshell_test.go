package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordo-run/ordo/internal/doctest"
)

// TestDocShellRuns runs the shell blocks of README.md and docs/ marked
// `<!-- doctest: run -->` with bash (their commands: doctest.Block.Script),
// as a new user would paste them: in a directory of their own holding a
// copy of the repository's examples/ (what they write stays there; the
// bundled plugins refuse symlinks out of their roots), with the built
// ordo first on PATH and a fresh home and data directory. Each must exit 0.
func TestDocShellRuns(t *testing.T) {
	blocks, err := doctest.Blocks(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, b := range blocks {
		if b.Directive != "run" {
			continue
		}
		ran++
		e := newEnv(t)
		vars := append(e.vars[:len(e.vars):len(e.vars)], "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		work := t.TempDir()
		if err := os.CopyFS(filepath.Join(work, "examples"), os.DirFS(filepath.Join(repoRoot, "examples"))); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.Script())
		cmd.Dir, cmd.Env = work, vars
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: %v\n%s\n%s", b, err, b.Text, out)
		}
	}
	if ran == 0 {
		t.Error("no shell block is marked <!-- doctest: run -->")
	}
}
