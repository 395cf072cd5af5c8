package storetest

import (
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// LongGoal is a goal of the most bytes a caller may give (10,000): what a
// log entry must not repeat at every step.
var LongGoal = strings.Repeat("sum up the week's notes, ", 400)

// testLogGoal: a run's goal is logged where it first appears and where it
// changes (a clarification's answers), never again at the steps between,
// and Load, Log and a fold from any cursor still give it.
func testLogGoal(t *testing.T, s memory.Checkpointer) {
	run := SimpleRun("goal", "u", contracts.RunRunning, 1, Base)
	run.Goal = LongGoal
	d := newDriver(t, s, run)
	for i := range 6 {
		d.addStep(i == 3)
	}
	clarified := LongGoal + "\n- week: 47"
	d.step(true, func(run *contracts.Run) { run.Goal = clarified })
	changed := d.run.Seq
	for i := range 4 {
		d.addStep(i == 1)
	}
	log := mustLog(t, s, "goal", 0, 0)
	for _, e := range log[1:] {
		want := ""
		if e.Seq == changed {
			want = clarified
		}
		if e.Goal != want {
			t.Fatalf("entry %d carries a goal of %d bytes, want %d", e.Seq, len(e.Goal), len(want))
		}
	}
	if log[0].Run == nil || log[0].Run.Goal != LongGoal {
		t.Fatal("the first entry does not carry the goal")
	}
	folded, err := contracts.FoldRun(log)
	if err != nil {
		t.Fatal(err)
	}
	requireSame(t, d.run, folded)
	for _, after := range []int64{1, changed - 1, changed} {
		run := clone(t, d.want[after])
		tail := mustLog(t, s, "goal", after, 0)
		for i := range tail {
			if err := run.Apply(&tail[i]); err != nil {
				t.Fatal(err)
			}
		}
		if run.Goal != clarified {
			t.Fatalf("folded after %d: goal of %d bytes, want the clarified one", after, len(run.Goal))
		}
	}
	requireSame(t, d.run, mustLoad(t, s, "goal"))
}

// RequireGoalInEveryEntry checks that a log written before the goal was
// left out of entries still loads: it saves run "old-goal" (whole, then
// five steps), lets addGoal rewrite its entries after the first, from
// sequence from on, to carry goal as older builds wrote them (the goal,
// then a clarified one from the fourth), then checks that Load, Log and a
// fold give the run with the clarified goal and that it carries on.
func RequireGoalInEveryEntry(t *testing.T, s memory.Checkpointer, addGoal func(t *testing.T, id string, from int64, goal string)) {
	t.Helper()
	run := SimpleRun("old-goal", "u", contracts.RunRunning, 1, Base)
	run.Goal = LongGoal
	d := newDriver(t, s, run)
	for range 5 {
		d.addStep(false)
	}
	clarified := LongGoal + " (clarified)"
	goal := func(seq int64) string {
		if seq >= 4 {
			return clarified
		}
		return LongGoal
	}
	addGoal(t, "old-goal", 2, LongGoal)
	addGoal(t, "old-goal", 4, clarified)
	d.run.Goal = clarified
	requireSame(t, d.run, mustLoad(t, s, "old-goal"))
	log := mustLog(t, s, "old-goal", 0, 0)
	for _, e := range log[1:] {
		if e.Goal != goal(e.Seq) {
			t.Fatalf("entry %d: addGoal did not write the goal", e.Seq)
		}
	}
	folded, err := contracts.FoldRun(log)
	if err != nil {
		t.Fatal(err)
	}
	requireSame(t, d.run, folded)
	d.run = mustLoad(t, s, "old-goal")
	d.addStep(false)
	if e := mustLog(t, s, "old-goal", d.run.Seq-1, 0); len(e) != 1 || e[0].Goal != "" {
		t.Fatalf("the entry after the old ones repeats the goal: %+v", e)
	}
}
