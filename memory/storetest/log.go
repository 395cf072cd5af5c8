package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/memory"
)

// clone is a deep copy of run as a store would hand it back: logged as it is.
func clone(t testing.TB, run *contracts.Run) *contracts.Run {
	t.Helper()
	data, err := memory.EncodeRun(run)
	if err != nil {
		t.Fatal(err)
	}
	c, err := memory.DecodeRun(data, contracts.RunFormatVersion)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustLog(t testing.TB, s memory.Checkpointer, id string, after int64, limit int) []contracts.RunDelta {
	t.Helper()
	log, err := s.Log(context.Background(), id, after, limit)
	if err != nil {
		t.Fatalf("log %s after %d: %v", id, after, err)
	}
	return log
}

func seqs(log []contracts.RunDelta) []int64 {
	out := []int64{}
	for _, d := range log {
		out = append(out, d.Seq)
	}
	return out
}

func seqRange(from, to int64) []int64 {
	out := []int64{}
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// LogStep is step record i of a run driven by the log tests: a payload and
// a result of the same size whatever i, producing state key out.
func LogStep(id string, i int, out string, at time.Time) contracts.StepRecord {
	return contracts.StepRecord{ActionID: fmt.Sprintf("a%05d", i), Tool: "notes.write", PlanVersion: 1, Attempt: 1,
		IdempotencyKey: fmt.Sprintf("%s/v1/a%05d/1", id, i), Status: contracts.StepSucceeded,
		Payload:   json.RawMessage(fmt.Sprintf(`{"title":"note %05d","body":"numbers for the week, twelve rows"}`, i)),
		Result:    json.RawMessage(fmt.Sprintf(`{"id":"note-%05d","url":"https://notes.example/n/%05d"}`, i, i)),
		Produced:  []string{out},
		StartedAt: at, EndedAt: at.Add(time.Millisecond)}
}

// driver advances one run the way the engine does: it keeps the value it
// saved (which the store marked logged) and changes it for the next step,
// or loads it afresh as a resuming server would, and checks after every
// Save that Load gives exactly the value. want[seq] is a copy of the run
// as saved at seq.
type driver struct {
	t     *testing.T
	s     memory.Checkpointer
	run   *contracts.Run
	start time.Time // sequence n is saved at start + n seconds
	want  map[int64]*contracts.Run
	every int64 // check Load after every this many saves (0: each)
}

func newDriver(t *testing.T, s memory.Checkpointer, run *contracts.Run) *driver {
	d := &driver{t: t, s: s, run: run, start: run.UpdatedAt.Add(-time.Duration(run.Seq) * time.Second), want: map[int64]*contracts.Run{}}
	d.saved()
	return d
}

func (d *driver) saved() {
	d.t.Helper()
	mustSave(d.t, d.s, d.run)
	if d.every == 0 || d.run.Seq%d.every == 0 {
		requireSame(d.t, d.run, mustLoad(d.t, d.s, d.run.ID))
	}
	d.want[d.run.Seq] = clone(d.t, d.run)
}

// step changes the run with fn, from the kept value or (reload) a fresh
// Load, and saves it as the next sequence.
func (d *driver) step(reload bool, fn func(run *contracts.Run)) {
	d.t.Helper()
	if reload {
		d.run = mustLoad(d.t, d.s, d.run.ID)
	}
	fn(d.run)
	d.run.Seq++
	d.run.UpdatedAt = d.start.Add(time.Duration(d.run.Seq) * time.Second)
	d.saved()
}

func (d *driver) addStep(reload bool) {
	d.step(reload, func(run *contracts.Run) {
		i := len(run.Steps)
		key := fmt.Sprintf("k%05d", i)
		run.Steps = append(run.Steps, LogStep(run.ID, i, key, run.UpdatedAt))
		if run.State == nil {
			run.State = map[string]json.RawMessage{}
		}
		run.State[key] = json.RawMessage(fmt.Sprintf(`{"id":"note-%05d"}`, i))
	})
}

// testLog drives a run through every kind of change the engine makes,
// saving each time, and checks the log: Log(after) is exactly the entries
// after the cursor, in order, deltas after the first, and they fold to the
// run as it was saved.
func testLog(t *testing.T, s memory.Checkpointer) {
	ctx := context.Background()
	full := FullRun("log", 1)
	run := SimpleRun("log", "ana", contracts.RunPending, 1, Base.Add(time.Second))
	run.Options = full.Options
	d := newDriver(t, s, run)
	d.step(false, func(run *contracts.Run) { // planned: plan version 1 with its policy
		run.Status = contracts.RunReady
		run.Plans = append(run.Plans, full.Plans...)
		run.Policy = maps.Clone(full.Policy)
		run.LLMCalls = map[string]int{"planner": 1}
		run.Usage.Add("planner", contracts.TokenUsage{InputTokens: 900, OutputTokens: 120, CachedTokens: 512, CostUSD: 0.0021, Models: []string{"m"}})
	})
	d.step(true, func(run *contracts.Run) { // waits for plan approval
		run.Status = contracts.RunInterrupted
		run.Interrupt = &contracts.Interrupt{Kind: contracts.InterruptPlanApproval, Message: "ok?", PlanVersion: 1, CreatedAt: run.UpdatedAt}
	})
	d.step(true, func(run *contracts.Run) { // approved: decision recorded, interrupt cleared
		run.Decisions = append(run.Decisions, contracts.DecisionRecord{Interrupt: *run.Interrupt,
			Decision: contracts.Decision{Kind: contracts.DecisionApprove, By: "ana"}, At: run.UpdatedAt})
		run.Interrupt = nil
		run.Status = contracts.RunRunning
	})
	for i := range 4 {
		d.addStep(i == 2)
	}
	d.step(false, func(run *contracts.Run) { // a failed step and a re-plan
		run.Steps = append(run.Steps, contracts.StepRecord{ActionID: "a1", Tool: "cal.book", PlanVersion: 1, Attempt: 1,
			Status: contracts.StepFailed, Error: &contracts.Error{Code: contracts.CodeToolTimeout, Message: "slow"}})
		rev := full.Plans[0]
		rev.Version, rev.Source, rev.Reason = 2, "replanner", "a1 timed out"
		run.Plans = append(run.Plans, rev)
		run.Policy = map[string]contracts.PolicyDecision{"a1": {Decision: contracts.PolicyAllow, Reason: "re-planned"}}
		run.ReplanCount++
		run.LLMCalls["replanner"]++
		run.Usage.Add("replanner", contracts.TokenUsage{InputTokens: 1500, OutputTokens: 300, CostUSD: 0.0042, Models: []string{"m"}})
		run.Goal = "book a table, any table"
	})
	d.addStep(true)
	d.step(false, func(run *contracts.Run) { // asks for input, gets it
		run.Status = contracts.RunInterrupted
		run.Interrupt = &contracts.Interrupt{Kind: contracts.InterruptInputRequired, Message: "when?", Fields: []string{"when"}, CreatedAt: run.UpdatedAt}
	})
	d.step(true, func(run *contracts.Run) {
		run.Decisions = append(run.Decisions, contracts.DecisionRecord{Interrupt: *run.Interrupt,
			Decision: contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"when": "19:00"}, By: "ana"}, At: run.UpdatedAt})
		run.Interrupt = nil
		run.Status = contracts.RunRunning
	})
	d.addStep(false)
	d.step(false, func(run *contracts.Run) { // done
		run.Status = contracts.RunCompleted
		run.Result = &contracts.RunResult{Answer: "booked", Composer: "template"}
		run.Error = &contracts.Error{Code: contracts.CodeReplanExhausted, Message: "kept for the record"}
		run.LLMCalls["composer"] = 1
	})
	last := d.run.Seq

	all := mustLog(t, s, "log", 0, 0)
	if got := seqs(all); !reflect.DeepEqual(got, seqRange(1, last)) {
		t.Fatalf("Log(0) sequences %v, want 1..%d", got, last)
	}
	if all[0].Run == nil || all[0].Kind() != "created" {
		t.Fatalf("first entry is not the whole run: kind %s", all[0].Kind())
	}
	for _, e := range all[1:] {
		if e.Run != nil {
			t.Fatalf("entry %d carries the whole run; want only what changed", e.Seq)
		}
	}
	if k := all[last-1].Kind(); k != string(contracts.RunCompleted) {
		t.Fatalf("last entry kind %q, summary %q", k, all[last-1].Summary())
	}
	folded, err := contracts.FoldRun(all)
	if err != nil {
		t.Fatal(err)
	}
	requireSame(t, d.run, folded)
	if u := folded.Usage; u.Total.InputTokens != 2400 || u.ByRole["replanner"].OutputTokens != 300 || u.Total.CachedTokens != 512 {
		t.Fatalf("token usage lost on the way through the log: %+v", u)
	}
	for after := int64(0); after <= last+1; after++ {
		tail := mustLog(t, s, "log", after, 0)
		if got := seqs(tail); !reflect.DeepEqual(got, seqRange(after+1, last)) {
			t.Fatalf("Log(%d) sequences %v, want %d..%d", after, got, after+1, last)
		}
		if after == 0 {
			continue
		}
		run := clone(t, d.want[min(after, last)])
		for i := range tail {
			if err := run.Apply(&tail[i]); err != nil {
				t.Fatalf("apply entry %d after %d: %v", tail[i].Seq, after, err)
			}
		}
		requireSame(t, d.run, run)
	}
	if got := seqs(mustLog(t, s, "log", 3, 4)); !reflect.DeepEqual(got, []int64{4, 5, 6, 7}) {
		t.Fatalf("Log(3, limit 4): %v", got)
	}
	if _, err := s.Log(ctx, "nobody", 0, 0); contracts.CodeOf(err) != contracts.CodeRunNotFound {
		t.Fatalf("log of an unknown run: %v", err)
	}
	// A refused write adds nothing to the log.
	stale := clone(t, d.want[last-1])
	stale.Seq = last
	stale.Status = contracts.RunFailed
	testerr.Code(t, s.Save(ctx, stale), contracts.CodeSequenceConflict)
	if got := seqs(mustLog(t, s, "log", 0, 0)); !reflect.DeepEqual(got, seqRange(1, last)) {
		t.Fatalf("log after a refused write: %v", got)
	}
	requireSame(t, d.run, mustLoad(t, s, "log"))
}

// testLogEntrySize saves a run one step at a time for 200 steps and checks
// that an entry does not grow with the run (the entry for step 200 is the
// size of the one for step 10, give or take a few bytes), and that Load
// stays right all along (so the snapshots taken on the way are right).
func testLogEntrySize(t *testing.T, s memory.Checkpointer) {
	const steps = 200
	run := SimpleRun("long", "u", contracts.RunRunning, 1, Base)
	d := newDriver(t, s, run)
	d.every = 7
	for i := range steps {
		d.addStep(i%50 == 49)
	}
	requireSame(t, d.run, mustLoad(t, s, "long"))
	log := mustLog(t, s, "long", 0, 0)
	if len(log) != steps+1 {
		t.Fatalf("%d entries, want %d", len(log), steps+1)
	}
	size := func(seq int64) int {
		data, err := json.Marshal(log[seq-1])
		if err != nil {
			t.Fatal(err)
		}
		return len(data)
	}
	// Entry seq k+1 holds step k-1 (seq 1 is the new run).
	at10, at200 := size(11), size(steps+1)
	if at200 > at10+8 {
		t.Fatalf("entry for step 200 is %d bytes, for step 10 %d: entries grow with the run", at200, at10)
	}
	folded, err := contracts.FoldRun(log)
	if err != nil {
		t.Fatal(err)
	}
	requireSame(t, d.run, folded)
	for _, seq := range []int64{2, 50, 120, steps} {
		tail := mustLog(t, s, "long", seq, 0)
		if len(tail) != steps+1-int(seq) {
			t.Fatalf("Log(%d): %d entries", seq, len(tail))
		}
	}
}

// testCompact folds the logs of old finished runs into one whole-run entry
// each, leaves the others alone, and changes nothing Load returns.
func testCompact(t *testing.T, s memory.Checkpointer) {
	ctx := context.Background()
	cut := Base.Add(time.Hour)
	drive := func(id string, steps int, final bool, at time.Time) *driver {
		d := newDriver(t, s, SimpleRun(id, "u", contracts.RunRunning, 1, at))
		for range steps {
			d.addStep(false)
		}
		if final {
			d.step(false, func(run *contracts.Run) { run.Status = contracts.RunCompleted })
		}
		return d
	}
	old := drive("old", 6, true, Base)
	open := drive("open", 6, false, Base)
	recent := drive("recent", 3, true, cut.Add(time.Hour))

	n, err := s.Compact(ctx, cut)
	if err != nil || n != 1 {
		t.Fatalf("compact: %d, %v; want 1", n, err)
	}
	requireSame(t, old.run, mustLoad(t, s, "old"))
	last := old.run.Seq
	for _, after := range []int64{0, 1, last - 1} {
		log := mustLog(t, s, "old", after, 0)
		if len(log) != 1 || log[0].Run == nil || log[0].Seq != last {
			t.Fatalf("Log(%d) after compaction: sequences %v, want one whole run at %d", after, seqs(log), last)
		}
		folded, err := contracts.FoldRun(log)
		if err != nil {
			t.Fatal(err)
		}
		requireSame(t, old.run, folded)
	}
	if log := mustLog(t, s, "old", last, 0); len(log) != 0 {
		t.Fatalf("Log(%d) after compaction: %v", last, seqs(log))
	}
	for _, d := range []*driver{open, recent} {
		if got := seqs(mustLog(t, s, d.run.ID, 0, 0)); !reflect.DeepEqual(got, seqRange(1, d.run.Seq)) {
			t.Fatalf("%s was compacted: %v", d.run.ID, got)
		}
		requireSame(t, d.run, mustLoad(t, s, d.run.ID))
	}
	if n, err := s.Compact(ctx, cut); err != nil || n != 0 {
		t.Fatalf("second compact: %d, %v", n, err)
	}
	if n, err := s.Prune(ctx, cut); err != nil || n != 1 {
		t.Fatalf("prune after compaction: %d, %v", n, err)
	}
	if _, err := s.Log(ctx, "old", 0, 0); contracts.CodeOf(err) != contracts.CodeRunNotFound {
		t.Fatalf("log of a pruned run: %v", err)
	}
}

// testPruneLog: pruning removes a run's log with it, so an id used again
// starts a log of its own.
func testPruneLog(t *testing.T, s memory.Checkpointer) {
	ctx := context.Background()
	d := newDriver(t, s, SimpleRun("p", "u", contracts.RunRunning, 1, Base))
	for range 5 {
		d.addStep(false)
	}
	d.step(false, func(run *contracts.Run) { run.Status = contracts.RunFailed })
	if n, err := s.Prune(ctx, Base.Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("prune: %d, %v", n, err)
	}
	if _, err := s.Log(ctx, "p", 0, 0); contracts.CodeOf(err) != contracts.CodeRunNotFound {
		t.Fatalf("log of a pruned run: %v", err)
	}
	again := SimpleRun("p", "u", contracts.RunRunning, 1, Base.Add(2*time.Hour))
	mustSave(t, s, again)
	log := mustLog(t, s, "p", 0, 0)
	if len(log) != 1 || log[0].Run == nil || log[0].Run.Status != contracts.RunRunning || len(log[0].Run.Steps) != 0 {
		t.Fatalf("log of a reused id: %v", seqs(log))
	}
	requireSame(t, again, mustLoad(t, s, "p"))
}

// testHandBuilt: a run that was never logged (built by hand, not loaded)
// saved at seq > 1 is a whole-run entry, and a logged run saved as a new
// run (seq 1) is too.
func testHandBuilt(t *testing.T, s memory.Checkpointer) {
	mustSave(t, s, SimpleRun("hand", "u", contracts.RunRunning, 1, Base))
	built := FullRun("hand", 2)
	mustSave(t, s, built)
	log := mustLog(t, s, "hand", 1, 0)
	if len(log) != 1 || log[0].Run == nil || log[0].Seq != 2 {
		t.Fatalf("hand-built run at seq 2: entries %v, whole %v", seqs(log), len(log) == 1 && log[0].Run != nil)
	}
	requireSame(t, built, mustLoad(t, s, "hand"))
	// It carries on as deltas.
	d := &driver{t: t, s: s, run: built, start: Base, want: map[int64]*contracts.Run{}}
	d.addStep(false)
	if log := mustLog(t, s, "hand", 2, 0); len(log) != 1 || log[0].Run != nil {
		t.Fatalf("entry after the hand-built one is not a delta")
	}

	// A loaded run given to another id as seq 1 is logged whole.
	other := mustLoad(t, s, "hand")
	other.ID, other.Seq = "hand-2", 1
	mustSave(t, s, other)
	if log := mustLog(t, s, "hand-2", 0, 0); len(log) != 1 || log[0].Run == nil {
		t.Fatal("a new run was not logged whole")
	}
	requireSame(t, other, mustLoad(t, s, "hand-2"))
}

// RequireCarriesOn appends one step to each run (a run migrated from an
// older store or format, loaded once) and checks that it is logged as a
// delta and that both its log and Load give the run back.
func RequireCarriesOn(t *testing.T, s memory.Checkpointer, runs ...*contracts.Run) {
	t.Helper()
	for _, run := range runs {
		run.Seq++
		run.Steps = append(run.Steps, LogStep(run.ID, len(run.Steps), "k", Base))
		run.State["k"] = json.RawMessage(`1`)
		run.Status = contracts.RunRunning
		mustSave(t, s, run)
		log := mustLog(t, s, run.ID, 0, 0)
		if len(log) != 2 || log[1].Run != nil {
			t.Fatalf("%s: log after a save %+v", run.ID, log)
		}
		folded, err := contracts.FoldRun(log)
		if err != nil {
			t.Fatal(err)
		}
		requireSame(t, run, folded)
		requireSame(t, run, mustLoad(t, s, run.ID))
	}
}

// RequireMigrated checks a store migrated from checkpoints an older build
// wrote: run "v1" (full, at seq 3) and the format-0 run "run-v0" (seq 4)
// load as they were, and each log is one whole-run entry at that seq. It
// returns both runs, loaded, for RequireCarriesOn.
func RequireMigrated(t *testing.T, s memory.Checkpointer, full *contracts.Run) (v1, v0 *contracts.Run) {
	t.Helper()
	v1 = mustLoad(t, s, "v1")
	requireSame(t, full, v1)
	v0 = mustLoad(t, s, "run-v0")
	RequireUpgradedV0(t, v0)
	for id, seq := range map[string]int64{"v1": 3, "run-v0": 4} {
		if log := mustLog(t, s, id, 0, 0); len(log) != 1 || log[0].Run == nil || log[0].Seq != seq {
			t.Fatalf("%s: log after migration %+v", id, log)
		}
	}
	return v1, v0
}
