package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/syncbuf"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/mcpserver"
)

// chainPlan greets, reads later.csv from the sheets root (missing until
// the test writes it), then reports both.
const chainPlan = `{"version":"1.0","goal":"greet, read later.csv, report","timezone":"UTC","actions":[
 {"id":"greet","tool":"text.template","intent":"transform","requires":[],"produces":["text"],"inputs":{"template":"hello","values":{}}},
 {"id":"read","tool":"sheets.query","intent":"read","requires":["text"],"produces":["records"],"inputs":{"file":"later.csv"}},
 {"id":"report","tool":"text.template","intent":"summarize","requires":["text","records"],"produces":[],
  "inputs":{"template":"{{greeting}}: {{rows.0.name}}","values":{}},"input_bindings":{"values.greeting":"text","values.rows":"records"}}]}`

// chainEnv is an env whose sheets root is a directory of its own, with
// the chain plan written beside it.
func chainEnv(t *testing.T) (e *env, plan, root string) {
	e = newEnv(t)
	root = filepath.Join(e.home, "sheets")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	e.vars = append(e.vars, "ORDO_SHEETS_ROOT="+root)
	plan = filepath.Join(e.home, "chain.plan.json")
	if err := os.WriteFile(plan, []byte(chainPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	return e, plan, root
}

// eventLines decodes `ordo runs events --json` output.
func eventLines(t *testing.T, out string) []mcpserver.EventView {
	t.Helper()
	var evs []mcpserver.EventView
	for line := range strings.Lines(out) {
		var v mcpserver.EventView
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("events line %q: %v", line, err)
		}
		evs = append(evs, v)
	}
	return evs
}

func stepsOf(run *contracts.Run, action string) []contracts.StepRecord {
	var out []contracts.StepRecord
	for _, s := range run.Steps {
		if s.ActionID == action {
			out = append(out, s)
		}
	}
	return out
}

// TestRunsForkRetriesFailedStep: a run fails at its second step; once the
// cause is fixed, `runs fork --from` runs that step and the one after it
// again, taking the first step's recorded result (it is not called again:
// its record is the original one), and completes.
func TestRunsForkRetriesFailedStep(t *testing.T) {
	t.Parallel()
	e, plan, root := chainEnv(t)
	e.vars = append(e.vars, "ORDO_ON_FAILURE=fail") // no model: the failed step would ask the person
	r := e.ordo("approve\n", "run", "--plan", plan, "--json")
	src := r.wantRun(t, 1)
	if src.Status != contracts.RunFailed || len(stepsOf(src, "greet")) != 1 || stepsOf(src, "report") != nil {
		t.Fatalf("source run: %s %+v", src.Status, src.Steps)
	}
	if err := os.WriteFile(filepath.Join(root, "later.csv"), []byte("name\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Errors first: an action not in the plan, an unknown run, no --from.
	bad := e.ordo("", "runs", "fork", src.ID, "--from", "nope")
	bad.want(t, 2)
	if !strings.Contains(bad.stderr, "error 1000") || !strings.Contains(bad.stderr, "from_action") {
		t.Fatalf("unknown action:\n%s", bad.stderr)
	}
	e.ordo("", "runs", "fork", "run_nope", "--from", "read").want(t, 1)
	e.ordo("", "runs", "fork", src.ID).want(t, 2)

	// The fork asks for its plan approval on stdin, like `ordo run`.
	r = e.ordo("approve\n", "runs", "fork", src.ID, "--from", "read", "--json")
	fork := r.wantRun(t, 0)
	if fork.ID == src.ID || fork.Status != contracts.RunCompleted || fork.Result == nil {
		t.Fatalf("fork: %s %+v", fork.Status, fork.Result)
	}
	if !strings.Contains(r.stderr, "approve the plan?") || !strings.Contains(r.stderr, "forking "+src.ID+" from action read") {
		t.Errorf("fork's terminal output:\n%s", r.stderr)
	}
	greet := stepsOf(fork, "greet")
	if len(greet) != 1 || !greet[0].StartedAt.Equal(stepsOf(src, "greet")[0].StartedAt) {
		t.Fatalf("greet in the fork: %+v, want the source's record %+v", greet, stepsOf(src, "greet"))
	}
	if s := stepsOf(fork, "report"); len(s) == 0 || s[len(s)-1].Status != contracts.StepSucceeded {
		t.Fatalf("report: %+v", s)
	}
	// The source run is unchanged.
	show := e.ordo("", "runs", "show", src.ID, "--json")
	show.want(t, 0)
	if again := show.run(t); again.Status != contracts.RunFailed || again.Seq != src.Seq {
		t.Fatalf("source after the fork: %s seq %d (was %d)", again.Status, again.Seq, src.Seq)
	}

	// --yes approves without asking, as ordo run --yes does.
	r = e.ordo("", "runs", "fork", src.ID, "--from", "read", "--yes", "--json")
	r.want(t, 0)
	if got := r.run(t); got.Status != contracts.RunCompleted || len(got.Decisions) != 0 || !got.Options.AutoApprove || !got.Options.AutoApprovePolicy {
		t.Fatalf("fork --yes: %s %+v %+v", got.Status, got.Decisions, got.Options)
	}
}

// TestRunsReplayEventsCompact: replay prints the run rebuilt from its log
// and checks it; events prints entries after a cursor; compact folds the
// log into one snapshot that replays to the same run.
func TestRunsReplayEventsCompact(t *testing.T) {
	t.Parallel()
	e, plan, root := chainEnv(t)
	if err := os.WriteFile(filepath.Join(root, "later.csv"), []byte("name\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.ordo("", "run", "--plan", plan, "--yes", "--json")
	run := r.wantRun(t, 0)

	r = e.ordo("", "runs", "replay", run.ID)
	r.want(t, 0)
	for _, want := range []string{"created", "completed", "greet text.template attempt 1 succeeded", "ok: the run rebuilt from its"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("replay lacks %q:\n%s", want, r.stdout)
		}
	}
	r = e.ordo("", "runs", "replay", run.ID, "--json")
	r.want(t, 0)
	var page mcpserver.EventsPage
	if err := json.Unmarshal([]byte(r.stdout), &page); err != nil {
		t.Fatalf("replay --json: %v\n%s", err, r.stdout)
	}
	if page.RunID != run.ID || page.Next != run.Seq || page.Status != contracts.RunCompleted || int64(len(page.Events)) != run.Seq {
		t.Fatalf("replay --json: %+v (run seq %d)", page, run.Seq)
	}
	var entries []contracts.RunDelta
	for _, ev := range page.Events {
		entries = append(entries, *ev.Entry)
	}
	folded, err := contracts.FoldRun(entries)
	if err != nil || folded.Status != contracts.RunCompleted || len(folded.Steps) != len(run.Steps) {
		t.Fatalf("fold: %v %+v", err, folded)
	}

	// events: all, then after a cursor; --follow on a final run ends.
	r = e.ordo("", "runs", "events", run.ID, "--json")
	r.want(t, 0)
	all := eventLines(t, r.stdout)
	if len(all) != len(page.Events) || !strings.Contains(r.stderr, "cursor "+itoa(run.Seq)+": the run is completed") {
		t.Fatalf("events: %d, replay %d\n%s", len(all), len(page.Events), r.stderr)
	}
	r = e.ordo("", "runs", "events", run.ID, "--after", "2", "--follow")
	r.want(t, 0)
	if n := len(strings.Split(strings.TrimSpace(r.stdout), "\n")); int64(n) != run.Seq-2 {
		t.Fatalf("events --after 2: %d lines, want %d:\n%s", n, run.Seq-2, r.stdout)
	}
	e.ordo("", "runs", "events", run.ID, "--after", "-1").want(t, 2)
	// A cursor beyond the last entry names no entry: refused, not waited after.
	r = e.ordo("", "runs", "events", run.ID, "--after", itoa(run.Seq+1), "--follow")
	r.want(t, 2)
	if !strings.Contains(r.stderr, "1000") || !strings.Contains(r.stderr, "beyond the last entry") {
		t.Fatalf("events --after beyond the end:\n%s", r.stderr)
	}
	e.ordo("", "runs", "events", "run_nope").want(t, 1)

	// compact folds the finished run; it replays and shows the same.
	r = e.ordo("", "runs", "compact")
	r.wantOut(t, 0, "compacted 1 finished run(s)")
	r = e.ordo("", "runs", "replay", run.ID)
	r.want(t, 0)
	if !strings.Contains(r.stdout, "1 log entries") || !strings.Contains(r.stdout, "snapshot") || !strings.Contains(r.stdout, "ok: ") {
		t.Fatalf("replay after compact:\n%s", r.stdout)
	}
	show := e.ordo("", "runs", "show", run.ID, "--json")
	show.want(t, 0)
	if got := show.run(t); got.Seq != run.Seq || len(got.Steps) != len(run.Steps) || got.Status != contracts.RunCompleted {
		t.Fatalf("after compact: seq %d steps %d %s", got.Seq, len(got.Steps), got.Status)
	}
	r = e.ordo("", "runs", "compact", "--older-than", "1h")
	r.wantOut(t, 0, "compacted 0 finished run(s) older than 1h0m0s")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRunsEventsFollow follows an interrupted run from one process while
// another resumes it; the follower prints every entry once and ends when
// the run completes.
func TestRunsEventsFollow(t *testing.T) {
	t.Parallel()
	e, plan, root := chainEnv(t)
	if err := os.WriteFile(filepath.Join(root, "later.csv"), []byte("name\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.ordo("", "run", "--plan", plan, "--json") // no answer: waits for plan approval
	run := r.wantRun(t, 3)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	follow := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "runs", "events", run.ID, "--follow", "--json")
	follow.Dir, follow.Env = repoRoot, e.vars
	var out, errb syncbuf.Buffer
	follow.Stdout, follow.Stderr = &out, &errb
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the follower has printed what is stored, then resume.
	testwait.For(t, time.Minute, func() error {
		if n := strings.Count(out.String(), "\n"); int64(n) < run.Seq {
			return fmt.Errorf("follower printed %q\n%s", out.String(), errb.String())
		}
		return nil
	})
	e.ordo("approve\n", "runs", "resume", run.ID).want(t, 0)
	if err := follow.Wait(); err != nil {
		t.Fatalf("follower: %v\n%s", err, errb.String())
	}
	got := eventLines(t, out.String())
	r = e.ordo("", "runs", "events", run.ID, "--json")
	r.want(t, 0)
	want := eventLines(t, r.stdout)
	if len(got) != len(want) {
		t.Fatalf("followed %d entries, the log holds %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || got[i].Kind != want[i].Kind {
			t.Fatalf("entry %d: followed %d %s, stored %d %s", i, got[i].Seq, got[i].Kind, want[i].Seq, want[i].Kind)
		}
	}
	if last := got[len(got)-1]; mcpserver.EntryStatus(last.Entry) != contracts.RunCompleted {
		t.Fatalf("the follower ended on %s", mcpserver.EntryStatus(last.Entry))
	}
}

// TestRunLogHelp: the run-log commands document themselves with examples.
func TestRunLogHelp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []string{"fork", "replay", "events", "compact"} {
		r := e.ordo("", "runs", c, "--help")
		r.want(t, 0)
		if !strings.Contains(r.stdout, "Examples:") || !strings.Contains(r.stdout, "ordo runs "+c) {
			t.Errorf("ordo runs %s --help:\n%s", c, r.stdout)
		}
	}
}
