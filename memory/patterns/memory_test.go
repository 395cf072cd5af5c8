package patterns_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/memory/patterns"
	"github.com/ordo-run/ordo/recommender/embed"
)

const report = "send the weekly sales report to the team"

func TestPlanConsolidation(t *testing.T) {
	m := open(t, "", patterns.Options{})
	ok := contracts.RunCompleted
	collect(t, m,
		finishedRun("ann", report, ok, step{"sheets.query", "read the sales figures", true, 10}, step{"chat.post", "post the report", true, 10}),
		// Same goal, worded differently: the same pattern, counted twice.
		finishedRun("ann", "Send weekly sales report to my team!", ok, step{"sheets.query", "read the sales figures", true, 10}, step{"chat.post", "post the report", true, 10}),
	)
	plans := list(t, m, "ann", patterns.NSPlan)
	if len(plans) != 1 || plans[0].Successes != 2 || plans[0].Failures != 0 {
		t.Fatalf("similar goal did not update the record: %+v", plans)
	}
	first := plans[0]

	collect(t, m,
		// A dissimilar goal is a new record.
		finishedRun("ann", "delete old files in the downloads folder", ok, step{"files.delete", "delete the files", true, 10}),
		// A similar goal reached with other tools is another pattern.
		finishedRun("ann", report, ok, step{"notes.create_page", "write the report", true, 10}),
		// A failure of the known shape counts against it.
		finishedRun("ann", report, contracts.RunFailed, step{"sheets.query", "read the sales figures", true, 10}, step{"chat.post", "post the report", false, 10}),
		// A failure of an unknown shape is not remembered as a plan.
		finishedRun("ann", "archive the mailbox", contracts.RunFailed, step{"mail.archive", "archive", false, 10}),
	)
	plans = list(t, m, "ann", patterns.NSPlan)
	if len(plans) != 3 {
		t.Fatalf("want 3 plan records, got %d: %+v", len(plans), plans)
	}
	got, err := m.Show(t.Context(), "ann", first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Successes != 2 || got.Failures != 1 || got.SuccessRate() != 2.0/3 || !got.LastUsed.Equal(t0.Add(60e9)) {
		t.Fatalf("failure not counted on the consolidated record: %+v", got)
	}
}

func TestToolCountsDurationAndShouldAvoid(t *testing.T) {
	m := open(t, "", patterns.Options{})
	read := "read the customer list"
	fail := func(ms int) *contracts.Run {
		return finishedRun("ann", "list customers", contracts.RunFailed, step{"crm.read", read, false, ms})
	}
	collect(t, m, finishedRun("ann", "list customers", contracts.RunCompleted,
		step{"crm.read", read, true, 100}, step{"crm.read", "read customers list", true, 300}))
	tools := list(t, m, "ann", patterns.NSTool)
	if len(tools) != 1 || tools[0].Successes != 2 || tools[0].MeanDurationMS != 200 {
		t.Fatalf("want one crm.read record, 2 successes, mean 200 ms: %+v", tools)
	}
	collect(t, m, fail(500), fail(500))
	if r := list(t, m, "ann", patterns.NSTool)[0]; r.ShouldAvoid || r.Failures != 2 {
		t.Fatalf("two failures against two successes must not avoid: %+v", r)
	}
	collect(t, m, fail(500))
	r := list(t, m, "ann", patterns.NSTool)[0]
	if !r.ShouldAvoid || r.Failures != 3 || r.MeanDurationMS != 380 {
		t.Fatalf("three failures outweighing successes must avoid (mean (100+300+3*500)/5): %+v", r)
	}
	adv, err := m.ToolAdvice(t.Context(), "ann", "read the customers list")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(adv.Avoid, []string{"crm.read"}) || len(adv.Boost) != 0 {
		t.Fatalf("advice %+v", adv)
	}
	// A different tool for another kind of step is unaffected, and the
	// avoided tool recovers once it works again.
	collect(t, m, finishedRun("ann", "note", contracts.RunCompleted, step{"notes.write", "write a note about the meeting", true, 5}))
	for range 2 {
		collect(t, m, finishedRun("ann", "list customers", contracts.RunCompleted, step{"crm.read", read, true, 100}))
	}
	adv, _ = m.ToolAdvice(t.Context(), "ann", read)
	if len(adv.Avoid) != 0 || adv.Boost["crm.read"] == 0 || adv.Boost["notes.write"] != 0 {
		t.Fatalf("after recovery: %+v", adv)
	}
}

func TestColdStartMultiplier(t *testing.T) {
	want := map[int]float64{-1: 0, 0: 0, 1: 0.3, 2: 0.5, 3: 0.7, 4: 0.7, 5: 1, 6: 1, 100: 1}
	for n, w := range want {
		if got := patterns.Multiplier(n); got != w {
			t.Errorf("Multiplier(%d) = %v, want %v", n, got, w)
		}
	}
	// The multiplier reaches the advice: a tool that worked once is boosted
	// 0.3 × 0.3, five times 0.3 × 1.
	m := open(t, "", patterns.Options{})
	boosts := []float64{}
	for range 5 {
		collect(t, m, finishedRun("ann", "g", contracts.RunCompleted, step{"sheets.query", "query the budget sheet", true, 1}))
		adv, err := m.ToolAdvice(t.Context(), "ann", "query the budget sheet")
		if err != nil {
			t.Fatal(err)
		}
		boosts = append(boosts, adv.Boost["sheets.query"])
	}
	for i, w := range []float64{0.09, 0.15, 0.21, 0.21, 0.3} {
		if math.Abs(boosts[i]-w) > 1e-9 {
			t.Fatalf("boosts %v, want %v at %d", boosts, w, i)
		}
	}
}

func TestPerUserScoping(t *testing.T) {
	m := open(t, "", patterns.Options{})
	run := finishedRun("ann", report, contracts.RunCompleted, step{"chat.post", "post the report", true, 1})
	decide(run, contracts.Interrupt{Kind: contracts.InterruptStepApproval, Tool: "chat.post"}, contracts.Decision{Kind: contracts.DecisionApprove, By: "ann"})
	collect(t, m, run)
	if err := m.SaveTemplate(t.Context(), "ann", "weekly", run.Plans[0].Plan); err != nil {
		t.Fatal(err)
	}
	annAll := list(t, m, "ann", "")
	if len(annAll) != 4 { // plan, tool, behavior, workflow
		t.Fatalf("ann has %d records", len(annAll))
	}
	if got := list(t, m, "bob", ""); len(got) != 0 {
		t.Fatalf("bob sees %d of ann's records", len(got))
	}
	ex, _ := m.Examples(t.Context(), "bob", report, 3)
	adv, _ := m.ToolAdvice(t.Context(), "bob", "post the report")
	pred, _ := m.PredictApproval(t.Context(), "bob", "chat.post")
	_, tplErr := m.Template(t.Context(), "bob", "weekly")
	if len(ex) != 0 || len(adv.Boost) != 0 || pred.Samples != 0 || tplErr == nil {
		t.Fatalf("bob's queries see ann's memory: %v %v %v %v", ex, adv, pred, tplErr)
	}
	_, err := m.Show(t.Context(), "bob", annAll[0].ID)
	testerr.Field(t, err, contracts.CodeInvalidInput, "id")
	_, err = m.Forget(t.Context(), "bob", "", annAll[0].ID)
	testerr.Field(t, err, contracts.CodeInvalidInput, "id")
	if n, err := m.Forget(t.Context(), "bob", "", ""); n != 0 || err != nil {
		t.Fatalf("bob forgot %d (%v)", n, err)
	}
	if len(list(t, m, "ann", "")) != 4 {
		t.Fatal("bob's forget touched ann's records")
	}
}

// seedAnn gives ann a plan, a tool and a template record, and returns
// her records.
func seedAnn(t *testing.T, m *patterns.Memory) []patterns.Record {
	t.Helper()
	collect(t, m, finishedRun("ann", report, contracts.RunCompleted, step{"chat.post", "post the report", true, 1}))
	if err := m.SaveTemplate(t.Context(), "ann", "weekly", contracts.Plan{Goal: report, Actions: []contracts.Action{{ID: "a1", Tool: "chat.post"}}}); err != nil {
		t.Fatal(err)
	}
	return list(t, m, "ann", "")
}

func TestPersistenceAcrossReopenAndEmbedderChange(t *testing.T) {
	dir := t.TempDir()
	m := open(t, dir, patterns.Options{})
	before := seedAnn(t, m)

	m2 := open(t, dir, patterns.Options{})
	after := list(t, m2, "ann", "")
	if len(after) != len(before) || len(after) != 3 {
		t.Fatalf("reopen: %d records, want %d", len(after), len(before))
	}
	for i := range before {
		if before[i].ID != after[i].ID || before[i].Successes != after[i].Successes {
			t.Fatalf("record %d changed across reopen: %+v vs %+v", i, before[i], after[i])
		}
	}
	// Consolidation keeps working on the reopened store.
	collect(t, m2, finishedRun("ann", report, contracts.RunCompleted, step{"chat.post", "post the report", true, 1}))
	if p := list(t, m2, "ann", patterns.NSPlan); len(p) != 1 || p[0].Successes != 2 {
		t.Fatalf("after reopen: %+v", p)
	}

	// Another embedder: every record is re-embedded and still found.
	small := embed.NewHashed(embed.HashedOptions{Dim: 64})
	m3, err := patterns.Open(dir, small, patterns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	requireFound(t, m3)
	if tpl, err := m3.Template(t.Context(), "ann", "weekly"); err != nil || tpl.Plan.Actions[0].Tool != "chat.post" {
		t.Fatalf("template after embedder change: %+v %v", tpl, err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "ordo-patterns.json"))
	if !strings.Contains(string(b), small.Identity()) || !strings.Contains(string(b), `"dim":64`) {
		t.Fatalf("manifest not updated: %s", b)
	}
}

func TestExamples(t *testing.T) {
	m := open(t, "", patterns.Options{})
	ok := contracts.RunCompleted
	weekly := finishedRun("ann", report, ok, step{"sheets.query", "read", true, 1}, step{"chat.post", "post", true, 1})
	monthly := finishedRun("ann", "send the monthly sales report to the team", ok, step{"sheets.query", "read", true, 1}, step{"mail.send", "mail", true, 1})
	collect(t, m, weekly, weekly, weekly, weekly, weekly, monthly,
		finishedRun("ann", "delete old files in the downloads folder", ok, step{"files.delete", "delete", true, 1}),
		// Similar goal, a plan that fails more than it works: no example.
		finishedRun("ann", report, ok, step{"notes.write", "w", true, 1}),
		finishedRun("ann", report, contracts.RunFailed, step{"notes.write", "w", false, 1}),
		finishedRun("ann", report, contracts.RunFailed, step{"notes.write", "w", false, 1}),
	)
	ex, err := m.Examples(t.Context(), "ann", "send the weekly sales report to the team", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 2 || ex[0].Plan.Actions[1].Tool != "chat.post" || ex[1].Plan.Actions[1].Tool != "mail.send" {
		t.Fatalf("want weekly then monthly, got %+v", ex)
	}
	if ex[0].Confidence != 1 || ex[1].Confidence != 0.3 || !(ex[0].Score > ex[1].Score) {
		t.Fatalf("confidence/score: %+v", ex)
	}
	if one, _ := m.Examples(t.Context(), "ann", report, 1); len(one) != 1 || one[0].ID != ex[0].ID {
		t.Fatalf("k=1: %+v", one)
	}
	_, err = m.Examples(t.Context(), "ann", report, -1)
	testerr.Field(t, err, contracts.CodeInvalidInput, "k")
	_, err = m.Examples(t.Context(), "ann", "  ", 3)
	testerr.Field(t, err, contracts.CodeInvalidInput, "goal")
}

// clarify records a clarification answered by who with answers.
func clarify(run *contracts.Run, who string, answers map[string]any) *contracts.Run {
	run.Goal += "\n\nClarifications:\n- language: whatever" // the engine appends answers to the goal
	return decide(run, contracts.Interrupt{Kind: contracts.InterruptClarify, Questions: []string{"Which language?"}},
		contracts.Decision{Kind: contracts.DecisionAnswer, Answers: answers, By: who})
}

func TestClarificationReuse(t *testing.T) {
	m := open(t, "", patterns.Options{})
	goal := "translate the document"
	fr := map[string]any{"Which language?": "French"}
	run := func(who string, answers map[string]any, status contracts.RunStatus) *contracts.Run {
		return clarify(finishedRun("ann", goal, status, step{"text.translate", "translate", true, 1}), who, answers)
	}
	if c, err := m.Clarification(t.Context(), "ann", goal); c != nil || err != nil {
		t.Fatalf("empty memory: %+v %v", c, err)
	}
	collect(t, m, run("ann", fr, contracts.RunCompleted))
	c, err := m.Clarification(t.Context(), "ann", "Translate the document.")
	if err != nil || c == nil {
		t.Fatalf("remembered clarification not found: %v", err)
	}
	if c.Auto || c.ReuseCount != 0 || c.Suggestions()["Which language?"] != "French" || c.Goal != goal {
		t.Fatalf("first answer must only be a suggestion: %+v", c)
	}
	for i := 1; i <= 5; i++ {
		collect(t, m, run("memory", fr, contracts.RunCompleted))
		c, _ = m.Clarification(t.Context(), "ann", goal)
		if c.ReuseCount != i || c.Auto != (i == 5) {
			t.Fatalf("after %d reuses: %+v", i, c)
		}
	}
	if c.Confidence != 1 {
		t.Fatalf("confidence %v", c.Confidence)
	}
	// One failure: confidence 6/7 < 0.9, no longer automatic.
	collect(t, m, run("ann", fr, contracts.RunFailed))
	if c, _ = m.Clarification(t.Context(), "ann", goal); c.Auto || c.ReuseCount != 6 {
		t.Fatalf("after a failed reuse: %+v", c)
	}
	// A different answer replaces the old one and starts over.
	collect(t, m, run("ann", map[string]any{"Which language?": "German", "formal": true}, contracts.RunCompleted))
	c, _ = m.Clarification(t.Context(), "ann", goal)
	if c.ReuseCount != 0 || c.Auto || c.Suggestions()["Which language?"] != "German" || c.Suggestions()["formal"] != "true" {
		t.Fatalf("changed answer: %+v", c)
	}
	if n := len(list(t, m, "ann", patterns.NSClarification)); n != 1 {
		t.Fatalf("%d clarification records", n)
	}
	if c, _ := m.Clarification(t.Context(), "ann", "delete old files in the downloads folder"); c != nil {
		t.Fatalf("dissimilar goal got %+v", c)
	}
}

// An answer given in a run that then failed, was rejected or cancelled is
// not remembered: it neither replaces an answer that worked (which would
// also reset its trust) nor becomes a suggestion of its own. A failed run
// with the remembered answer still counts against it.
func TestClarificationFromARunThatDidNotWorkIsNotKept(t *testing.T) {
	m := open(t, "", patterns.Options{})
	goal := "translate the document"
	fr, de := map[string]any{"Which language?": "French"}, map[string]any{"Which language?": "German"}
	run := func(g string, answers map[string]any, status contracts.RunStatus) *contracts.Run {
		return clarify(finishedRun("ann", g, status, step{"text.translate", "translate", status == contracts.RunCompleted, 1}), "ann", answers)
	}
	for _, status := range []contracts.RunStatus{contracts.RunFailed, contracts.RunRejected, contracts.RunCancelled} {
		collect(t, m, run("delete old files in the downloads folder", de, status))
	}
	if n := len(list(t, m, "ann", patterns.NSClarification)); n != 0 {
		t.Fatalf("runs that did not work left %d clarifications", n)
	}
	collect(t, m, run(goal, fr, contracts.RunCompleted), run(goal, fr, contracts.RunCompleted))
	for _, status := range []contracts.RunStatus{contracts.RunFailed, contracts.RunRejected, contracts.RunCancelled} {
		collect(t, m, run(goal, de, status))
	}
	c, _ := m.Clarification(t.Context(), "ann", goal)
	if c == nil || c.Suggestions()["Which language?"] != "French" || c.ReuseCount != 1 {
		t.Fatalf("an answer that did not work replaced one that did: %+v", c)
	}
	collect(t, m, run(goal, fr, contracts.RunFailed))
	rs := list(t, m, "ann", patterns.NSClarification)
	if len(rs) != 1 || rs[0].Successes != 2 || rs[0].Failures != 1 {
		t.Fatalf("a failed run with the remembered answer is not counted: %+v", rs)
	}
}

func TestPredictApproval(t *testing.T) {
	m := open(t, "", patterns.Options{})
	approve := func(kind contracts.DecisionKind, by string) *contracts.Run {
		r := finishedRun("ann", "post", contracts.RunCompleted, step{"chat.post", "post", true, 1})
		return decide(r, contracts.Interrupt{Kind: contracts.InterruptStepApproval, Tool: "chat.post", ActionID: "a1"}, contracts.Decision{Kind: kind, By: by})
	}
	p, err := m.PredictApproval(t.Context(), "ann", "chat.post")
	if err != nil || p.Samples != 0 || p.Probability != 0 || p.Accept {
		t.Fatalf("no history: %+v %v", p, err)
	}
	for range 4 {
		collect(t, m, approve(contracts.DecisionApprove, "ann"))
	}
	// Decisions memory or auto made are not the person's behaviour.
	collect(t, m, approve(contracts.DecisionApprove, "memory"), approve(contracts.DecisionApprove, "auto"))
	if p, _ = m.PredictApproval(t.Context(), "ann", "chat.post"); p.Samples != 4 || p.Probability != 0.7 || p.Accept {
		t.Fatalf("4 approvals (cold start 0.7): %+v", p)
	}
	collect(t, m, approve(contracts.DecisionApprove, "ann"))
	if p, _ = m.PredictApproval(t.Context(), "ann", "chat.post"); p.Probability != 1 || !p.Accept {
		t.Fatalf("5 approvals: %+v", p)
	}
	collect(t, m, approve(contracts.DecisionEdit, "ann"))
	if p, _ = m.PredictApproval(t.Context(), "ann", "chat.post"); math.Abs(p.Probability-5.0/6) > 1e-9 || !p.Accept {
		t.Fatalf("5 of 6: %+v", p)
	}
	collect(t, m, approve(contracts.DecisionSkip, "ann"))
	if p, _ = m.PredictApproval(t.Context(), "ann", "chat.post"); math.Abs(p.Probability-5.0/7) > 1e-9 || p.Accept {
		t.Fatalf("5 of 7: %+v", p)
	}
	r := list(t, m, "ann", patterns.NSBehavior)
	if len(r) != 1 || r[0].Approvals != 5 || r[0].Edits != 1 || r[0].Skips != 1 || r[0].Rejects != 0 {
		t.Fatalf("behavior record %+v", r)
	}
	if p, _ := m.PredictApproval(t.Context(), "ann", "chat.delete"); p.Samples != 0 {
		t.Fatalf("another tool borrowed chat.post's history: %+v", p)
	}
}

func TestTemplates(t *testing.T) {
	m := open(t, "", patterns.Options{})
	plan := func(tool string) contracts.Plan {
		return contracts.Plan{Version: "1.0", Goal: report, Actions: []contracts.Action{{ID: "a1", Tool: tool}}}
	}
	for _, name := range []string{"weekly", "daily"} {
		if err := m.SaveTemplate(t.Context(), "ann", name, plan("chat.post")); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.SaveTemplate(t.Context(), "ann", "weekly", plan("mail.send")); err != nil {
		t.Fatal(err)
	}
	tpl, err := m.Template(t.Context(), "ann", "weekly")
	if err != nil || tpl.Plan.Actions[0].Tool != "mail.send" || tpl.Name != "weekly" {
		t.Fatalf("saving again did not replace: %+v %v", tpl, err)
	}
	all, err := m.Templates(t.Context(), "ann")
	if err != nil || len(all) != 2 || all[0].Name != "daily" || all[1].Name != "weekly" {
		t.Fatalf("templates %+v %v", all, err)
	}
	if n, err := m.Forget(t.Context(), "ann", patterns.NSWorkflow, "daily"); n != 1 || err != nil {
		t.Fatalf("forget by name: %d %v", n, err)
	}
	_, err = m.Template(t.Context(), "ann", "daily")
	testerr.Field(t, err, contracts.CodeInvalidInput, "name")
	testerr.Field(t, m.SaveTemplate(t.Context(), "ann", "", plan("x")), contracts.CodeInvalidInput, "name")
	testerr.Field(t, m.SaveTemplate(t.Context(), "ann", "bad\nname", plan("x")), contracts.CodeInvalidInput, "name")
	testerr.Field(t, m.SaveTemplate(t.Context(), "ann", "empty", contracts.Plan{}), contracts.CodeInvalidInput, "plan")
	if all, _ := m.Templates(t.Context(), "ann"); len(all) != 1 {
		t.Fatalf("refused saves changed the store: %+v", all)
	}
}

func TestListShowForget(t *testing.T) {
	m := open(t, "", patterns.Options{})
	collect(t, m,
		finishedRun("ann", report, contracts.RunCompleted, step{"chat.post", "post the report", true, 1}),
		finishedRun("ann", "delete old files in the downloads folder", contracts.RunCompleted, step{"files.delete", "delete the files", true, 1}))
	all := list(t, m, "ann", "")
	if len(all) != 4 {
		t.Fatalf("%d records", len(all))
	}
	for _, r := range all {
		got, err := m.Show(t.Context(), "ann", r.ID)
		if err != nil || got.ID != r.ID || got.Namespace != r.Namespace {
			t.Fatalf("show %s: %+v %v", r.ID, got, err)
		}
	}
	ns, err := patterns.ParseNamespace(" Tools ")
	if err != nil || ns != patterns.NSTool {
		t.Fatalf("parse: %q %v", ns, err)
	}
	_, err = patterns.ParseNamespace("plans2")
	testerr.Field(t, err, contracts.CodeInvalidInput, "namespace")
	_, err = m.List(t.Context(), "ann", "bogus")
	testerr.Field(t, err, contracts.CodeInvalidInput, "namespace")

	tools := list(t, m, "ann", ns)
	if n, err := m.Forget(t.Context(), "ann", patterns.NSTool, tools[0].ID); n != 1 || err != nil {
		t.Fatalf("forget one: %d %v", n, err)
	}
	if n, err := m.Forget(t.Context(), "ann", patterns.NSPlan, ""); n != 2 || err != nil {
		t.Fatalf("forget namespace: %d %v", n, err)
	}
	if rest := list(t, m, "ann", ""); len(rest) != 1 || rest[0].ID != tools[1].ID {
		t.Fatalf("left: %+v", rest)
	}
	_, err = m.Forget(t.Context(), "ann", "", "no-such-id")
	testerr.Field(t, err, contracts.CodeInvalidInput, "id")
}

func TestBadInputChangesNothing(t *testing.T) {
	m := open(t, "", patterns.Options{})
	running := finishedRun("ann", report, contracts.RunInterrupted, step{"chat.post", "post", true, 1})
	testerr.Field(t, m.Collect(t.Context(), nil), contracts.CodeInvalidInput, "run")
	testerr.Field(t, m.Collect(t.Context(), running), contracts.CodeInvalidInput, "status")
	badUser := finishedRun("ann\x00", report, contracts.RunCompleted, step{"chat.post", "post", true, 1})
	testerr.Field(t, m.Collect(t.Context(), badUser), contracts.CodeInvalidInput, "user_id")
	if n := len(list(t, m, "ann", "")) + len(list(t, m, "", "")); n != 0 {
		t.Fatalf("refused runs stored %d records", n)
	}
	_, err := m.List(t.Context(), strings.Repeat("u", 201), "")
	testerr.Field(t, err, contracts.CodeInvalidInput, "user")
	_, err = m.ToolAdvice(t.Context(), "ann", "")
	testerr.Field(t, err, contracts.CodeInvalidInput, "text")
	_, err = m.PredictApproval(t.Context(), "ann", " ")
	testerr.Field(t, err, contracts.CodeInvalidInput, "tool")
	for field, o := range map[string]patterns.Options{
		"similarity":         {Similarity: 1.5},
		"min_similarity":     {MinSimilarity: -0.1},
		"auto_approve_above": {AutoApproveAbove: math.NaN()},
		"avoid_after":        {AvoidAfter: -1},
	} {
		_, err := patterns.Open("", nil, o)
		testerr.Field(t, err, contracts.CodeInvalidConfig, field)
	}
}

// A plan that completed twice for one goal becomes a learned template,
// offered for a like goal; once is not enough, a failure never teaches,
// and a template a person saved under the same name is kept.
func TestCompletedRunsLearnTemplates(t *testing.T) {
	m := open(t, "", patterns.Options{})
	post := step{"chat.post", "post the report", true, 1}
	collect(t, m, finishedRun("ann", report, contracts.RunCompleted, post),
		finishedRun("ann", report, contracts.RunFailed, step{"chat.post", "post the report", false, 1}))
	if all, _ := m.Templates(t.Context(), "ann"); len(all) != 0 {
		t.Fatalf("learned after one completed run: %+v", all)
	}
	collect(t, m, finishedRun("ann", report, contracts.RunCompleted, post))
	all, err := m.Templates(t.Context(), "ann")
	if err != nil || len(all) != 1 || !all[0].Learned || !strings.HasPrefix(all[0].Name, "learned-") ||
		all[0].Plan.Actions[0].Tool != "chat.post" || all[0].Successes != 0 {
		t.Fatalf("templates after two completed runs: %+v %v", all, err)
	}
	match, err := m.MatchTemplate(t.Context(), "ann", report)
	if err != nil || match == nil || match.Name != all[0].Name {
		t.Fatalf("match %+v %v", match, err)
	}
	if others, _ := m.Templates(t.Context(), "bob"); len(others) != 0 {
		t.Fatalf("another user sees ann's learned template: %+v", others)
	}
	fromTemplate := func() *contracts.Run {
		r := finishedRun("cy", report, contracts.RunCompleted, post)
		r.Plans[0].Source = "template"
		return r
	}
	collect(t, m, fromTemplate(), fromTemplate())
	if got, _ := m.Templates(t.Context(), "cy"); len(got) != 0 {
		t.Fatalf("runs planned from a template taught another one: %+v", got)
	}

	saved := contracts.Plan{Version: "1.0", Goal: report, Actions: []contracts.Action{{ID: "a1", Tool: "mail.send"}}}
	if err := m.SaveTemplate(t.Context(), "ann", all[0].Name, saved); err != nil {
		t.Fatal(err)
	}
	collect(t, m, finishedRun("ann", report, contracts.RunCompleted, post))
	tpl, err := m.Template(t.Context(), "ann", all[0].Name)
	if err != nil || tpl.Learned || tpl.Plan.Actions[0].Tool != "mail.send" {
		t.Fatalf("a saved template was replaced by a learned one: %+v %v", tpl, err)
	}
}

// A person's answers to a tool's missing fields come back as suggestions
// for that tool and user, the latest answer of each field winning; memory's
// own decisions teach nothing, and no step approval is counted.
func TestInputSuggestions(t *testing.T) {
	m := open(t, "", patterns.Options{})
	answer := func(by string, answers map[string]any) *contracts.Run {
		r := finishedRun("ann", "post", contracts.RunCompleted, step{"chat.post", "post", true, 1})
		return decide(r, contracts.Interrupt{Kind: contracts.InterruptInputRequired, Tool: "chat.post", ActionID: "a1", PlanVersion: 1, Fields: []string{"$.channel", "$.thread.id"}},
			contracts.Decision{Kind: contracts.DecisionAnswer, Answers: answers, By: by})
	}
	fields := []string{"$.channel", "$.thread.id", "text"}
	if s, err := m.InputSuggestions(t.Context(), "ann", "chat.post", fields); err != nil || len(s) != 0 {
		t.Fatalf("no history: %v %v", s, err)
	}
	collect(t, m, answer("ann", map[string]any{"$.channel": "#general", "thread.id": 7}))
	collect(t, m, answer("ann", map[string]any{"channel": "#team"}), answer("memory", map[string]any{"$.channel": "#bots"}))
	s, err := m.InputSuggestions(t.Context(), "ann", "chat.post", fields)
	if err != nil || len(s) != 2 || s["$.channel"] != "#team" || s["$.thread.id"] != "7" {
		t.Fatalf("suggestions = %v %v", s, err)
	}
	if p, _ := m.PredictApproval(t.Context(), "ann", "chat.post"); p.Samples != 0 {
		t.Fatalf("answers counted as approvals: %+v", p)
	}
	for user, tool := range map[string]string{"bob": "chat.post", "ann": "chat.delete"} {
		if s, _ := m.InputSuggestions(t.Context(), user, tool, fields); len(s) != 0 {
			t.Fatalf("%s/%s borrowed ann's chat.post answers: %v", user, tool, s)
		}
	}
}

// Only what a person gave for the fields the interrupt asked, for a step
// that then worked, is remembered: not an extra key an answer slipped in
// (a "$token" spelling that escapes the secret-field check, or thousands of
// keys growing the record), not a value that led to a failed step, not a
// value too long to be a suggestion; and a record keeps at most
// MaxInputAnswers fields, the latest run's first.
func TestInputSuggestionsKeepOnlyAskedFieldsThatWorked(t *testing.T) {
	m := open(t, "", patterns.Options{})
	answer := func(ok bool, fields []string, answers map[string]any) *contracts.Run {
		status := contracts.RunCompleted
		if !ok {
			status = contracts.RunFailed
		}
		r := finishedRun("ann", "post", status, step{"chat.post", "post", ok, 1})
		return decide(r, contracts.Interrupt{Kind: contracts.InterruptInputRequired, Tool: "chat.post", ActionID: "a1", PlanVersion: 1, Fields: fields},
			contracts.Decision{Kind: contracts.DecisionAnswer, Answers: answers, By: "ann"})
	}
	asked := []string{"$.channel"}
	collect(t, m, answer(true, asked, map[string]any{"$.channel": "#ok", "$token": "s3cret", "junk": "x"}))
	collect(t, m, answer(false, asked, map[string]any{"$.channel": "#wrong"}))
	collect(t, m, answer(true, asked, map[string]any{"$.channel": strings.Repeat("x", patterns.MaxInputAnswerBytes+1)}))
	s, err := m.InputSuggestions(t.Context(), "ann", "chat.post", []string{"$.channel", "$token", "junk"})
	if err != nil || len(s) != 1 || s["$.channel"] != "#ok" {
		t.Fatalf("suggestions = %v %v, want only $.channel #ok", s, err)
	}
	for _, r := range list(t, m, "ann", patterns.NSBehavior) {
		if raw, _ := json.Marshal(r.Answers); strings.Contains(string(raw), "s3cret") {
			t.Fatalf("an unasked key was remembered: %s", raw)
		}
	}
	for run := range 3 {
		fields, answers := []string{}, map[string]any{}
		for i := range patterns.MaxInputAnswers {
			f := fmt.Sprintf("$.f%d_%d", run, i)
			fields, answers[f] = append(fields, f), "v"
		}
		collect(t, m, answer(true, fields, answers))
	}
	rs := list(t, m, "ann", patterns.NSBehavior)
	if len(rs) != 1 || len(rs[0].Answers) != patterns.MaxInputAnswers || rs[0].Answers["f2_0"] != "v" {
		t.Fatalf("behavior record holds %d answers (want %d, the latest run's): %v", len(rs[0].Answers), patterns.MaxInputAnswers, rs)
	}
}

// A process killed while chromem-go wrote a record (it truncates the file,
// then writes) leaves it cut off; the next open sets it aside and opens
// with every other record, where it refused to open at all, and so did
// every ordo command. A collection whose creation was cut off (its
// metadata empty, no record yet) is created again.
func TestOpenSetsAsideRecordsCutOffByACrash(t *testing.T) {
	dir := t.TempDir()
	m := open(t, dir, patterns.Options{})
	before := seedAnn(t, m)
	docs, _ := filepath.Glob(filepath.Join(dir, "*", "*.gob"))
	var cut string
	var emptyCol string
	for _, d := range docs {
		if filepath.Base(d) != "00000000.gob" && cut == "" {
			cut = d
		}
	}
	for _, d := range docs {
		if filepath.Base(d) == "00000000.gob" {
			if others, _ := filepath.Glob(filepath.Join(filepath.Dir(d), "*.gob")); len(others) == 1 {
				emptyCol = d
			}
		}
	}
	if cut == "" || emptyCol == "" {
		t.Fatalf("no record or no empty collection among %v", docs)
	}
	for _, f := range []string{cut, emptyCol} {
		if err := os.Truncate(f, 0); err != nil {
			t.Fatal(err)
		}
	}
	m2, err := patterns.Open(dir, nil, patterns.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("open after a cut-off write: %v", err)
	}
	after := list(t, m2, "ann", "")
	if len(after) != len(before)-1 {
		t.Fatalf("reopen: %d records, want %d (all but the cut one)", len(after), len(before)-1)
	}
	if _, err := os.Stat(cut + ".cut"); err != nil {
		t.Fatalf("the cut record was not set aside: %v", err)
	}
	collect(t, m2, finishedRun("ann", report, contracts.RunCompleted, step{"chat.post", "post the report", true, 1}))
	if _, err := patterns.Open(dir, nil, patterns.Options{}); err != nil {
		t.Fatalf("third open: %v", err)
	}
}

// One user cannot grow memory without bound: every query of every user
// filters the whole collection, so bob's thousands of distinct goals would
// slow ann's planning. Past Options.MaxRecords of a user's records in a
// namespace the least recently used go (ann's are untouched); a template
// is something a person saved, so a new name past the limit is refused
// with a coded error and nothing changes, while an existing one can still
// be saved again.
func TestRecordsPerUserAreBounded(t *testing.T) {
	const limit = 10
	m := open(t, t.TempDir(), patterns.Options{MaxRecords: limit})
	collect(t, m, finishedRun("ann", report, contracts.RunCompleted, step{"chat.post", "post it", true, 1}))
	for i := range 3 * limit {
		goal := fmt.Sprintf("q%da q%db q%dc q%dd", i, i, i, i)
		r := finishedRun("bob", goal, contracts.RunCompleted, step{"chat.post", goal, true, 1})
		r.UpdatedAt = t0.Add(time.Duration(i) * time.Minute)
		collect(t, m, r)
	}
	for _, ns := range []patterns.Namespace{patterns.NSPlan, patterns.NSTool} {
		rs := list(t, m, "bob", ns)
		if len(rs) > limit || !strings.HasPrefix(rs[0].Text, fmt.Sprintf("q%da", 3*limit-1)) {
			t.Fatalf("bob keeps %d %s records (limit %d), newest %q", len(rs), ns, limit, rs[0].Text)
		}
		if got := list(t, m, "ann", ns); len(got) != 1 {
			t.Fatalf("ann's %s records = %d after bob's, want 1", ns, len(got))
		}
	}
	plan := contracts.Plan{Version: contracts.PlanVersion, Goal: "g", Actions: []contracts.Action{{ID: "a1", Tool: "chat.post"}}}
	for i := range limit {
		if err := m.SaveTemplate(t.Context(), "bob", fmt.Sprintf("t%d", i), plan); err != nil {
			t.Fatal(err)
		}
	}
	err := m.SaveTemplate(t.Context(), "bob", "one-too-many", plan)
	testerr.Field(t, err, contracts.CodeInvalidInput, "name")
	if err := m.SaveTemplate(t.Context(), "bob", "t3", plan); err != nil {
		t.Fatalf("saving an existing name again past the limit: %v", err)
	}
	ts, _ := m.Templates(t.Context(), "bob")
	if len(ts) != limit || slices.ContainsFunc(ts, func(x patterns.Template) bool { return x.Name == "one-too-many" }) {
		t.Fatalf("bob's templates = %d, want %d without the refused one", len(ts), limit)
	}
	if _, err := m.Forget(t.Context(), "bob", patterns.NSWorkflow, "t0"); err != nil {
		t.Fatal(err)
	}
	if err := m.SaveTemplate(t.Context(), "bob", "one-too-many", plan); err != nil {
		t.Fatalf("after a forget there is room: %v", err)
	}
}

// A record is at most MaxRecordBytes: a plan with a huge literal would sit
// in every process's memory and in the planner's prompt as an example. Such
// a run's plan is not remembered (its tool records are); saving it as a
// template is error 1000 naming the plan, and nothing is saved.
func TestHugePlansAreNotRemembered(t *testing.T) {
	m := open(t, "", patterns.Options{})
	r := finishedRun("ann", report, contracts.RunCompleted, step{"chat.post", "post it", true, 1})
	r.Plans[0].Plan.Actions[0].Inputs = map[string]any{"text": strings.Repeat("x", patterns.MaxRecordBytes)}
	collect(t, m, r, r)
	if n, tools := len(list(t, m, "ann", patterns.NSPlan)), len(list(t, m, "ann", patterns.NSTool)); n != 0 || tools != 1 {
		t.Fatalf("plan records %d (want 0), tool records %d (want 1)", n, tools)
	}
	err := m.SaveTemplate(t.Context(), "ann", "huge", r.Plans[0].Plan)
	testerr.Field(t, err, contracts.CodeInvalidInput, "plan")
	collect(t, m, clarify(finishedRun("ann", "translate it", contracts.RunCompleted, step{"text.translate", "translate", true, 1}), "ann",
		map[string]any{"Which text?": strings.Repeat("y", patterns.MaxRecordBytes)}))
	if n := len(list(t, m, "ann", patterns.NSClarification)); n != 0 {
		t.Fatalf("a huge answer was remembered (%d records)", n)
	}
	if ts, _ := m.Templates(t.Context(), "ann"); len(ts) != 0 {
		t.Fatalf("templates = %+v", ts)
	}
}

// failingEmbedder is an embedder whose service goes away after its first
// few documents (a remote embedder's outage).
type failingEmbedder struct {
	*embed.Hashed
	left int
}

func (f *failingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if f.left--; f.left < 0 {
		return nil, errors.New("embedder unavailable")
	}
	return f.Hashed.EmbedDocuments(ctx, texts)
}

// TestReembeddingCutOffIsDoneAgain: re-embedding for a new embedder that
// fails part way leaves the manifest naming the old one, so the next Open
// re-embeds every record again. Before, the first record re-embedded
// wrote the new embedder into the manifest: the next Open re-embedded
// nothing and the records not yet done kept the old model's vectors,
// which queries then compared with the new model's.
func TestReembeddingCutOffIsDoneAgain(t *testing.T) {
	dir := t.TempDir()
	seedAnn(t, open(t, dir, patterns.Options{}))
	small := embed.NewHashed(embed.HashedOptions{Dim: 64})
	if _, err := patterns.Open(dir, &failingEmbedder{Hashed: small, left: 1}, patterns.Options{}); err == nil {
		t.Fatal("re-embedding with a failing embedder succeeded")
	}
	m, err := patterns.Open(dir, small, patterns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	requireFound(t, m)
}

// requireFound checks seedAnn's plan and template are found by similarity
// (their vectors are the embedder's at hand).
func requireFound(t *testing.T, m *patterns.Memory) {
	t.Helper()
	ex, err := m.Examples(t.Context(), "ann", report, 1)
	if err != nil || len(ex) != 1 || ex[0].Similarity < 0.99 {
		t.Fatalf("examples: %+v %v", ex, err)
	}
	if match, err := m.MatchTemplate(t.Context(), "ann", "weekly "+report); err != nil || match == nil || match.Name != "weekly" {
		t.Fatalf("template offered: %+v %v", match, err)
	}
}

// TestOpenWithoutAManifest: records whose manifest is gone or unreadable
// (a power cut after its rename, before the disk had its bytes; a hand
// that deleted it) are re-embedded with the embedder at hand and the
// manifest written again. Before, Open refused (9002 "no usable manifest",
// 1014 for an empty file), and every `ordo` command with it.
func TestOpenWithoutAManifest(t *testing.T) {
	for name, damage := range map[string]func(string) error{
		"missing": os.Remove,
		"empty":   func(f string) error { return os.Truncate(f, 0) },
		"garbage": func(f string) error { return os.WriteFile(f, []byte("{\"format\":"), 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			seedAnn(t, open(t, dir, patterns.Options{}))
			manifest := filepath.Join(dir, "ordo-patterns.json")
			if err := damage(manifest); err != nil {
				t.Fatal(err)
			}
			requireFound(t, open(t, dir, patterns.Options{Logger: slog.New(slog.DiscardHandler)}))
			if b, err := os.ReadFile(manifest); err != nil || !strings.Contains(string(b), `"dim":256`) {
				t.Fatalf("manifest not written again: %s %v", b, err)
			}
		})
	}
}
