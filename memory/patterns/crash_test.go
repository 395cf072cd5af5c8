package patterns_test

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testchild"
	"github.com/ordo-run/ordo/memory/patterns"
)

// crashEnv tells a re-executed test binary to be the template writer that
// gets killed.
const crashEnv = "ORDO_PATTERNS_CRASH_CHILD"

// templatePlan is version i of ann's template: a short and a long summary
// in turn, so that a write cut off is a file shorter than either.
func templatePlan(i int) contracts.Plan {
	summary := fmt.Sprint("v", i%2)
	if i%2 == 1 {
		summary += strings.Repeat(" long", 10000)
	}
	return contracts.Plan{Version: "1.0", Goal: report, Actions: []contracts.Action{{ID: "a1", Tool: "chat.post", Summary: summary}}}
}

// TestTemplateWriterChild saves ann's template again and again until it is
// killed (only run re-executed by TestKilledWriteKeepsTheTemplate).
func TestTemplateWriterChild(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("helper process for TestKilledWriteKeepsTheTemplate")
	}
	m, err := patterns.Open(dir, nil, patterns.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		if err := m.SaveTemplate(t.Context(), "ann", "weekly", templatePlan(i)); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("saved", i)
	}
}

// TestKilledWriteKeepsTheTemplate SIGKILLs a process that keeps saving a
// template again, at seeded moments, and reopens the memory after each
// kill: the template is there, whole, one of the versions written. Before,
// a kill inside chromem-go's write (it truncates the file first) left the
// file cut off, the next Open set it aside, and the template was gone.
func TestKilledWriteKeepsTheTemplate(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(20261127, 3))
	for round := range 12 {
		cmd, sc := testchild.Start(t, "TestTemplateWriterChild", crashEnv+"="+dir)
		for seen := 2 + rng.IntN(20); seen > 0 && sc.Scan(); seen-- {
			if !strings.HasPrefix(sc.Text(), "saved ") {
				cmd.Process.Kill()
				t.Fatalf("child said %q", sc.Text())
			}
		}
		cmd.Process.Kill()
		for sc.Scan() {
		}
		cmd.Wait()

		m, err := patterns.Open(dir, nil, patterns.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		tpl, err := m.Template(t.Context(), "ann", "weekly")
		if err != nil {
			t.Fatalf("round %d: the template is gone: %v", round, err)
		}
		if s := tpl.Plan.Actions[0].Summary; s != templatePlan(0).Actions[0].Summary && s != templatePlan(1).Actions[0].Summary {
			t.Fatalf("round %d: the template is not a version written (%d bytes of summary)", round, len(s))
		}
	}
}
