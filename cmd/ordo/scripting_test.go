package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// A script pipes the plan in: --plan - reads it from stdin (before, "open
// -: no such file or directory"), for ordo run and runs fork alike, and
// tools call --input @- its arguments. With
// stdin spent on the plan, a question finds it at its end: the run stops
// resumable (exit 3) rather than waiting.
func TestPlanFromStdin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan, err := os.ReadFile(filepath.Join(repoRoot, firstRun))
	if err != nil {
		t.Fatal(err)
	}
	run := e.ordo(string(plan), "run", "--plan", "-", "--yes", "--json").wantRun(t, 0)
	if run.Status != contracts.RunCompleted || len(run.Steps) != 5 {
		t.Fatalf("status %s, %d steps", run.Status, len(run.Steps))
	}
	e.ordo(string(plan), "run", "--plan", "-").wantErr(t, 3, "approve the plan?")
	fork := e.ordo(string(plan), "runs", "fork", run.ID, "--from", "post_link", "--plan", "-", "--yes", "--json").wantRun(t, 0)
	if fork.ID == run.ID || fork.Status != contracts.RunCompleted {
		t.Fatalf("fork %s: %s", fork.ID, fork.Status)
	}
	e.ordo("not json", "run", "--plan", "-").wantErr(t, 2, "file: -")
	if r := e.ordo("", "run", "--plan", "-"); r.code != 2 || strings.Contains(r.stderr, "no such file") {
		t.Errorf("empty stdin: exit %d\n%s", r.code, r.stderr)
	}
	// tools call --input @- alike.
	e.ordo(`{"items": ["a", "b"]}`, "tools", "call", "text.join", "--input", "@-").wantOut(t, 0, `"a, b"`)
}

// A plan with several schema violations lists each on its own line, where
// it is and what is wrong; before, the details printed Go structs
// ("violations: [{/actions/0/intent /$defs/… value must be …} {…}]").
func TestPlanErrorListsEveryViolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := filepath.Join(e.home, "bad.plan.json")
	os.WriteFile(plan, []byte(`{"version":"1.0","goal":"g","timezone":"UTC","actions":[
		{"id":"a","tool":"text.join","intent":"post","requires":[],"produces":["text"],"inputs":{}},
		{"id":"b","tool":"text.join","intent":"send","requires":[],"produces":["text"],"inputs":{}}]}`), 0o600)
	r := e.ordo("", "run", "--plan", plan)
	r.wantErr(t, 2, "error 1002")
	for _, want := range []string{"\n  violations:\n", "\n    /actions/0/intent: value must be one of", "\n    /actions/1/intent: value must be one of"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "{/actions") {
		t.Errorf("a Go struct in the output:\n%s", r.stderr)
	}
}
