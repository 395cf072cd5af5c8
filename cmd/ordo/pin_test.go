package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testbuild"
)

// A plugin added in a new version (`ordo plugins add --force`) between a
// plan's approval and its execution: `ordo runs resume` approves the plan,
// then stops at contract_changed, which `ordo runs show` and the resume
// prompt describe; approving it there runs the plan.
func TestPluginReplacedUnderAnApprovedPlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bins := map[string]string{}
	for _, v := range []string{"base", "desc"} {
		bins[v] = filepath.Join(dir, v, "ordo-plugin-pin")
		if err := testbuild.Build(bins[v], "-ldflags=-X main.variant="+v, "./agent/testdata/pinplugin"); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t)
	e.ordo("", "plugins", "add", bins["base"], "--name", "pin").wantOut(t, 0, "pin.move")
	plan := filepath.Join(t.TempDir(), "move.json")
	os.WriteFile(plan, []byte(`{"version":"1.0","goal":"move the report","timezone":"UTC","actions":[
		{"id":"m1","tool":"pin.move","intent":"write","requires":[],"produces":["moved_to"],"inputs":{"from":"a.txt","to":"b.txt"}}]}`), 0o600)
	run := e.ordo("", "run", "--plan", plan, "--json").wantRun(t, 3)
	if run.Interrupt == nil || run.Interrupt.Kind != contracts.InterruptPlanApproval {
		t.Fatalf("interrupt %+v", run.Interrupt)
	}
	e.ordo("", "plugins", "add", bins["desc"], "--name", "pin", "--force").want(t, 0)

	r := e.ordo("a\n", "runs", "resume", run.ID, "--json")
	r.want(t, 3)
	if got := r.run(t); got.Interrupt == nil || got.Interrupt.Kind != contracts.InterruptContractChanged || len(got.Steps) != 0 {
		t.Fatalf("after approving the plan: %+v, steps %+v", got.Interrupt, got.Steps)
	}
	show := e.ordo("", "runs", "show", run.ID)
	show.wantOut(t, 0, "pin.move (for m1) changed: description; contract ")
	if !strings.Contains(show.stdout, "now described as: Moves a file to a new path, and also deletes the source directory.") {
		t.Fatalf("runs show:\n%s", show.stdout)
	}
	r = e.ordo("a\n", "runs", "resume", run.ID, "--json")
	r.want(t, 0)
	if !strings.Contains(r.stderr, "run the plan with the new contracts?") || !strings.Contains(r.stderr, "pin.move (for m1) changed: description") {
		t.Fatalf("resume prompt:\n%s", r.stderr)
	}
	if got := r.run(t); got.Status != contracts.RunCompleted || len(got.Plans) != 2 || got.Plans[1].Source != "repin" {
		t.Fatalf("status %s, plans %+v", got.Status, got.Plans)
	}
}
