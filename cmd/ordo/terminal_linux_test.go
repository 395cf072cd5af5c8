package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/cmd/ordo/internal/ptytest"
	"github.com/ordo-run/ordo/internal/testwait"
)

// On a terminal the spinner redraws its line with "\r\x1b[K"; under
// TERM=dumb (an editor's shell, some CI logs) those escapes would be
// printed as they are, so no escape is written there.
func TestDumbTerminalGetsNoEscapes(t *testing.T) {
	t.Parallel()
	for _, term := range []string{"xterm", "dumb"} {
		e := newEnv(t)
		e.withModel(llmtest.Reply{Role: "planner", Content: widgetPlan}, llmtest.Reply{Role: "composer", Content: "Six rows."})
		_, replica, shown := ptytest.Open(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "run", "List the widget sales")
		cmd.Dir, cmd.Env, cmd.Stderr = repoRoot, append(e.vars, "TERM="+term), replica
		if err := cmd.Run(); err != nil {
			t.Fatalf("TERM=%s: %v\n%s", term, err, shown.String())
		}
		testwait.Until(t, 10*time.Second, "the last line on the terminal", func() bool { return strings.Contains(shown.String(), "run record:") })
		if got := strings.Contains(shown.String(), "\x1b"); got != (term != "dumb") {
			t.Errorf("TERM=%s: escapes written %v:\n%q", term, got, shown.String())
		}
	}
}

// A run whose answer cannot be written to stdout (a full disk: /dev/full)
// exits 1 saying so, not 0: a script reading run.json after `ordo run
// --json > run.json` must not take an empty file for the record. The run
// itself is stored, completed.
func TestAnswerNotWrittenIsAFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "run", "--plan", firstRun, "--yes", "--json")
	var stderr strings.Builder
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = repoRoot, e.vars, full, &stderr
	if code := exitOf(cmd.Run()); code != 1 || !strings.Contains(stderr.String(), "the answer is not on stdout") {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	e.onlyRun(t, "completed")
}
