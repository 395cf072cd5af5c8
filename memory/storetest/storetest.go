package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/memory"
)

// Run checks the store contract against stores made by open, which must
// return a new, empty store each call (the suite closes it). Stores that
// also implement memory.Leaser or memory.Importer are checked for those.
func Run(t *testing.T, open func(t *testing.T) memory.Checkpointer) {
	fresh := func(t *testing.T) memory.Checkpointer {
		s := open(t)
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
		return s
	}
	tests := []struct {
		name string
		fn   func(*testing.T, memory.Checkpointer)
	}{
		{"RoundTrip", testRoundTrip},
		{"NoAliasing", testNoAliasing},
		{"SequenceRules", testSequenceRules},
		{"RacingWriters", testRacingWriters},
		{"BadInput", testBadInput},
		{"NotFound", testNotFound},
		{"List", testList},
		{"ListPagesThroughTies", testListPagesThroughTies},
		{"Sessions", testSessions},
		{"Prune", testPrune},
		{"ManyRuns", testManyRuns},
		{"OldFormat", testOldFormat},
		{"Log", testLog},
		{"LogEntrySize", testLogEntrySize},
		{"LogGoal", testLogGoal},
		{"Compact", testCompact},
		{"PruneLog", testPruneLog},
		{"Delete", testDelete},
		{"HandBuilt", testHandBuilt},
		{"Leases", testLeases},
		{"RestReleases", testRestReleases},
		{"SaveLeased", testSaveLeased},
		{"ClaimRace", testClaimRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, fresh(t)) })
	}
}

// Canonical is v as generic JSON, so runs compare by meaning: stores may
// re-format embedded JSON (Postgres JSONB does) and times lose their
// monotonic clock reading.
func Canonical(t testing.TB, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return out
}

func requireSame(t *testing.T, want, got *contracts.Run) {
	t.Helper()
	if w, g := Canonical(t, want), Canonical(t, got); !reflect.DeepEqual(w, g) {
		wj, _ := json.MarshalIndent(w, "", " ")
		gj, _ := json.MarshalIndent(g, "", " ")
		t.Fatalf("loaded run differs from saved one\nwant %s\ngot  %s", wj, gj)
	}
}

func mustSave(t testing.TB, s memory.Checkpointer, run *contracts.Run) {
	t.Helper()
	if err := s.Save(context.Background(), run); err != nil {
		t.Fatalf("save %s seq %d: %v", run.ID, run.Seq, err)
	}
}

func mustLoad(t testing.TB, s memory.Checkpointer, id string) *contracts.Run {
	t.Helper()
	run, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
	return run
}

func testRoundTrip(t *testing.T, s memory.Checkpointer) {
	run := FullRun("full", 1)
	requireAllSet(t, run)
	mustSave(t, s, run)
	requireSame(t, run, mustLoad(t, s, "full"))

	next := FullRun("full", 2)
	next.Status = contracts.RunCompleted
	next.Steps = append(next.Steps, contracts.StepRecord{ActionID: "a1", Tool: "cal.book", PlanVersion: 1, Attempt: 2,
		Status: contracts.StepSucceeded, StartedAt: Base, EndedAt: Base.Add(time.Second)})
	mustSave(t, s, next)
	got := mustLoad(t, s, "full")
	requireSame(t, next, got)
	if got.FormatVersion != contracts.RunFormatVersion {
		t.Fatalf("format version %d, want %d", got.FormatVersion, contracts.RunFormatVersion)
	}
}

// requireAllSet fails if the fixture leaves a field of Run at its zero
// value, so a field added to Run later is covered by the round trip.
func requireAllSet(t *testing.T, run *contracts.Run) {
	v := reflect.ValueOf(run).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue // the store's bookkeeping (the log mark), not data
		}
		if v.Field(i).IsZero() {
			t.Fatalf("fixture FullRun leaves Run.%s unset; set it so the round trip covers it", v.Type().Field(i).Name)
		}
	}
}

func testNoAliasing(t *testing.T, s memory.Checkpointer) {
	run := FullRun("alias", 1)
	want := Canonical(t, run)
	mustSave(t, s, run)
	run.Goal = "changed after save"
	run.Steps[0].Payload[2] = 'X'
	run.State["time"] = json.RawMessage(`"20:00"`)
	got := mustLoad(t, s, "alias")
	if !reflect.DeepEqual(want, Canonical(t, got)) {
		t.Fatal("changing a saved value changed the stored checkpoint")
	}
	got.Goal = "changed after load"
	got.Policy["a1"] = contracts.PolicyDecision{Decision: contracts.PolicyDeny}
	if !reflect.DeepEqual(want, Canonical(t, mustLoad(t, s, "alias"))) {
		t.Fatal("changing a loaded value changed the stored checkpoint")
	}
}

func testSequenceRules(t *testing.T, s memory.Checkpointer) {
	ctx := context.Background()
	for _, seq := range []int64{0, 2, -1} {
		testerr.Code(t, s.Save(ctx, SimpleRun("seq", "u", contracts.RunRunning, seq, Base)), contracts.CodeSequenceConflict)
		_, err := s.Load(ctx, "seq")
		testerr.Code(t, err, contracts.CodeRunNotFound)
	}
	first := SimpleRun("seq", "u", contracts.RunRunning, 1, Base)
	mustSave(t, s, first)
	for _, seq := range []int64{1, 3, 0} {
		bad := SimpleRun("seq", "u", contracts.RunFailed, seq, Base.Add(time.Hour))
		bad.Goal = "must not be stored"
		err := s.Save(ctx, bad)
		testerr.Code(t, err, contracts.CodeSequenceConflict)
		requireSame(t, first, mustLoad(t, s, "seq"))
	}
	second := SimpleRun("seq", "u", contracts.RunCompleted, 2, Base.Add(time.Second))
	mustSave(t, s, second)
	requireSame(t, second, mustLoad(t, s, "seq"))
}

// testRacingWriters has several writers race to write each next sequence
// of one run; exactly one may win each.
func testRacingWriters(t *testing.T, s memory.Checkpointer) {
	const writers, rounds = 6, 12
	mustSave(t, s, SimpleRun("race", "u", contracts.RunRunning, 1, Base))
	for seq := int64(2); seq < 2+rounds; seq++ {
		var wins atomic.Int32
		var winner atomic.Value
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				run := SimpleRun("race", "u", contracts.RunRunning, seq, Base.Add(time.Duration(seq)*time.Second))
				run.Goal = fmt.Sprintf("writer %d", w)
				<-start
				err := s.Save(context.Background(), run)
				switch contracts.CodeOf(err) {
				case 0:
					wins.Add(1)
					winner.Store(run.Goal)
				case contracts.CodeSequenceConflict:
				default:
					errs <- err
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("seq %d: unexpected error %v", seq, err)
		}
		if n := wins.Load(); n != 1 {
			t.Fatalf("seq %d: %d writers won, want exactly 1", seq, n)
		}
		got := mustLoad(t, s, "race")
		if got.Seq != seq || got.Goal != winner.Load() {
			t.Fatalf("seq %d: stored seq %d goal %q, winner wrote %q", seq, got.Seq, got.Goal, winner.Load())
		}
	}
}

func testBadInput(t *testing.T, s memory.Checkpointer) {
	ctx := context.Background()
	noStatus := SimpleRun("x", "u", "", 1, Base)
	for name, tc := range map[string]struct {
		run   *contracts.Run
		field string
	}{
		"nil":       {nil, "run"},
		"no id":     {SimpleRun("", "u", contracts.RunRunning, 1, Base), "id"},
		"no status": {noStatus, "status"},
	} {
		err := s.Save(ctx, tc.run)
		testerr.Code(t, err, contracts.CodeInvalidInput)
		if f := contracts.AsError(err).Details["field"]; f != tc.field {
			t.Fatalf("%s: error names field %v, want %q", name, f, tc.field)
		}
	}
	if list, err := s.List(ctx, memory.Filter{}); err != nil || len(list) != 0 {
		t.Fatalf("refused saves left runs behind: %v %v", list, err)
	}
	_, err := s.List(ctx, memory.Filter{Limit: -1})
	testerr.Code(t, err, contracts.CodeInvalidInput)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Save(cancelled, SimpleRun("c", "u", contracts.RunRunning, 1, Base)); err == nil {
		t.Fatal("save with a cancelled context succeeded")
	}
	if _, err := s.Load(ctx, "c"); contracts.CodeOf(err) != contracts.CodeRunNotFound {
		t.Fatalf("save with a cancelled context stored the run: %v", err)
	}
}

func testNotFound(t *testing.T, s memory.Checkpointer) {
	_, err := s.Load(context.Background(), "nobody")
	testerr.Code(t, err, contracts.CodeRunNotFound)
	if id := contracts.AsError(err).Details["run_id"]; id != "nobody" {
		t.Fatalf("not-found error names run %v", id)
	}
}

func ids(list []memory.RunSummary) []string {
	out := []string{}
	for _, r := range list {
		out = append(out, r.ID)
	}
	return out
}

// listCase is a List filter and the ids of the runs it finds, in order.
type listCase struct {
	name string
	f    memory.Filter
	want []string
}

// listed lists tc's filter from s, fails t unless it finds tc's runs, and
// returns their summaries.
func listed(t *testing.T, s memory.Checkpointer, tc listCase) []memory.RunSummary {
	t.Helper()
	got, err := s.List(context.Background(), tc.f)
	if err != nil {
		t.Fatalf("%s: %v", tc.name, err)
	}
	if !reflect.DeepEqual(ids(got), tc.want) {
		t.Fatalf("%s: got %v, want %v", tc.name, ids(got), tc.want)
	}
	return got
}

// testListPagesThroughTies: runs updated at the same instant are paged
// through one at a time, none skipped or shown twice, by the position
// after a page's last run (its time and id).
func testListPagesThroughTies(t *testing.T, s memory.Checkpointer) {
	at := Base.Add(time.Hour)
	for _, id := range []string{"t1", "t2", "t3"} {
		mustSave(t, s, SimpleRun(id, "ana", contracts.RunCompleted, 1, at))
	}
	mustSave(t, s, SimpleRun("t0", "ana", contracts.RunCompleted, 1, at.Add(-time.Minute)))
	var seen []string
	f := memory.Filter{Limit: 1}
	for range 5 {
		page, err := s.List(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		seen = append(seen, page[0].ID)
		f.UpdatedBefore, f.BeforeID = page[0].UpdatedAt, page[0].ID
	}
	if want := []string{"t3", "t2", "t1", "t0"}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("paged %v, want %v", seen, want)
	}
	_, err := s.List(context.Background(), memory.Filter{BeforeID: "t2"})
	testerr.Code(t, err, contracts.CodeInvalidInput)
}

func testList(t *testing.T, s memory.Checkpointer) {
	ctx := context.Background()
	at := func(n int) time.Time { return Base.Add(time.Duration(n) * time.Minute) }
	mustSave(t, s, SimpleRun("r1", "ana", contracts.RunCompleted, 1, at(1)))
	mustSave(t, s, SimpleRun("r2", "bo", contracts.RunRunning, 1, at(2)))
	mustSave(t, s, SimpleRun("r3", "ana", contracts.RunInterrupted, 1, at(3)))
	mustSave(t, s, SimpleRun("r4", "ana", contracts.RunFailed, 1, at(4)))
	r2 := SimpleRun("r2", "bo", contracts.RunCompleted, 2, at(5)) // r2 moves to newest
	mustSave(t, s, r2)

	cases := []listCase{
		{"all newest first", memory.Filter{}, []string{"r2", "r4", "r3", "r1"}},
		{"status", memory.Filter{Status: []contracts.RunStatus{contracts.RunCompleted}}, []string{"r2", "r1"}},
		{"statuses", memory.Filter{Status: []contracts.RunStatus{contracts.RunInterrupted, contracts.RunFailed}}, []string{"r4", "r3"}},
		{"user", memory.Filter{UserID: "ana"}, []string{"r4", "r3", "r1"}},
		{"after", memory.Filter{UpdatedAfter: at(3)}, []string{"r2", "r4"}},
		{"before", memory.Filter{UpdatedBefore: at(3)}, []string{"r1"}},
		{"between", memory.Filter{UpdatedAfter: at(1), UpdatedBefore: at(5)}, []string{"r4", "r3"}},
		{"limit", memory.Filter{Limit: 2}, []string{"r2", "r4"}},
		{"combined", memory.Filter{UserID: "ana", Status: []contracts.RunStatus{contracts.RunCompleted, contracts.RunFailed}, Limit: 1}, []string{"r4"}},
		{"none", memory.Filter{UserID: "nobody"}, []string{}},
	}
	for _, tc := range cases {
		listed(t, s, tc)
	}
	all, _ := s.List(ctx, memory.Filter{Limit: 1})
	want := memory.Summarize(r2)
	got := all[0]
	if got.ID != want.ID || got.UserID != want.UserID || got.Goal != want.Goal || got.Status != want.Status ||
		got.Seq != 2 || !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Fatalf("summary %+v, want %+v", got, want)
	}
}

func testPrune(t *testing.T, s memory.Checkpointer) {
	ctx := context.Background()
	cut := Base.Add(time.Hour)
	old, recent := Base, Base.Add(2*time.Hour)
	final := []contracts.RunStatus{contracts.RunCompleted, contracts.RunFailed, contracts.RunRejected, contracts.RunCancelled}
	open := []contracts.RunStatus{contracts.RunPending, contracts.RunReady, contracts.RunRunning, contracts.RunInterrupted}
	var gone, kept []string
	for _, st := range final {
		gone = append(gone, "old-"+string(st))
		mustSave(t, s, SimpleRun("old-"+string(st), "u", st, 1, old))
		kept = append(kept, "new-"+string(st))
		mustSave(t, s, SimpleRun("new-"+string(st), "u", st, 1, recent))
	}
	for _, st := range open {
		kept = append(kept, "old-"+string(st))
		mustSave(t, s, SimpleRun("old-"+string(st), "u", st, 1, old))
	}
	n, err := s.Prune(ctx, cut)
	if err != nil || n != len(gone) {
		t.Fatalf("prune: %d, %v; want %d", n, err, len(gone))
	}
	for _, id := range gone {
		_, err := s.Load(ctx, id)
		testerr.Code(t, err, contracts.CodeRunNotFound)
	}
	for _, id := range kept {
		mustLoad(t, s, id)
	}
	if n, err := s.Prune(ctx, cut); err != nil || n != 0 {
		t.Fatalf("second prune: %d, %v", n, err)
	}
	// A pruned id can start again from seq 1.
	mustSave(t, s, SimpleRun(gone[0], "u", contracts.RunRunning, 1, recent))
}

func testManyRuns(t *testing.T, s memory.Checkpointer) {
	const runs, steps = 24, 5
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := range runs {
		wg.Go(func() {
			id := fmt.Sprintf("many-%02d", i)
			for seq := int64(1); seq <= steps; seq++ {
				run := SimpleRun(id, "u", contracts.RunRunning, seq, Base.Add(time.Duration(seq)*time.Second))
				run.State = map[string]json.RawMessage{"i": json.RawMessage(fmt.Sprint(i))}
				if err := s.Save(context.Background(), run); err != nil {
					errs <- err
					return
				}
				if _, err := s.Load(context.Background(), id); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	list, err := s.List(context.Background(), memory.Filter{})
	if err != nil || len(list) != runs {
		t.Fatalf("list: %d runs, %v", len(list), err)
	}
	for i := range runs {
		got := mustLoad(t, s, fmt.Sprintf("many-%02d", i))
		if got.Seq != steps || string(got.State["i"]) != fmt.Sprint(i) {
			t.Fatalf("run %d: seq %d state %s", i, got.Seq, got.State["i"])
		}
	}
}

func testOldFormat(t *testing.T, s memory.Checkpointer) {
	imp, ok := s.(memory.Importer)
	if !ok {
		t.Skip("store does not implement memory.Importer; old checkpoints cannot be planted")
	}
	ctx := context.Background()
	testerr.Code(t, imp.Import(ctx, RunV0, contracts.RunFormatVersion+1), contracts.CodeCheckpointFormat)
	testerr.Code(t, imp.Import(ctx, []byte(`{"run_id":"x"`), 0), contracts.CodeCheckpointFormat)
	if err := imp.Import(ctx, RunV0, 0); err != nil {
		t.Fatalf("import v0: %v", err)
	}
	testerr.Code(t, imp.Import(ctx, RunV0, 0), contracts.CodeSequenceConflict)
	got := mustLoad(t, s, "run-v0")
	RequireUpgradedV0(t, got)
	list, err := s.List(ctx, memory.Filter{UserID: "ana"})
	if err != nil || len(list) != 1 || list[0].Seq != 4 || list[0].Status != contracts.RunInterrupted {
		t.Fatalf("list after import: %+v %v", list, err)
	}
	if log := mustLog(t, s, "run-v0", 0, 0); len(log) != 1 || log[0].Run == nil || log[0].Seq != 4 {
		t.Fatalf("log of an imported run: %v, want one whole run at 4", seqs(log))
	} else {
		RequireUpgradedV0(t, log[0].Run)
	}
	// The upgraded run carries on in the current format, as deltas.
	d := &driver{t: t, s: s, run: got, start: got.UpdatedAt.Add(-4 * time.Second), want: map[int64]*contracts.Run{4: clone(t, got)}}
	d.step(false, func(run *contracts.Run) {
		run.Decisions = append(run.Decisions, contracts.DecisionRecord{Interrupt: *run.Interrupt,
			Decision: contracts.Decision{Kind: contracts.DecisionApprove, By: "ana"}, At: run.UpdatedAt})
		run.Interrupt = nil
		run.Status = contracts.RunRunning
	})
	d.addStep(false)
	d.addStep(true)
	d.step(false, func(run *contracts.Run) { run.Status = contracts.RunCompleted })
	log := mustLog(t, s, "run-v0", 0, 0)
	if got := seqs(log); !reflect.DeepEqual(got, seqRange(4, 8)) {
		t.Fatalf("log after carrying on: %v", got)
	}
	for _, e := range log[1:] {
		if e.Run != nil {
			t.Fatalf("entry %d after the import is a whole run", e.Seq)
		}
	}
	folded, err := contracts.FoldRun(log)
	if err != nil {
		t.Fatal(err)
	}
	requireSame(t, d.run, folded)
	requireSame(t, d.run, mustLoad(t, s, "run-v0"))
}

// RequireUpgradedV0 checks that RunV0 was upgraded to the current format
// with nothing lost.
func RequireUpgradedV0(t testing.TB, got *contracts.Run) {
	t.Helper()
	switch {
	case got.FormatVersion != contracts.RunFormatVersion:
		t.Fatalf("format version %d", got.FormatVersion)
	case got.ID != "run-v0" || got.UserID != "ana" || got.Seq != 4 || got.Status != contracts.RunInterrupted:
		t.Fatalf("identity lost: %+v", got)
	case len(got.Plans) != 1 || got.Plans[0].Version != 1 || got.Plans[0].Source != "planner" ||
		len(got.Plans[0].Plan.Actions) != 2 || !got.Plans[0].CreatedAt.Equal(got.CreatedAt):
		t.Fatalf("plan not lifted into revision 1: %+v", got.Plans)
	case len(got.Steps) != 1 || got.Steps[0].IdempotencyKey != "run-v0/a1/1" || got.Steps[0].Status != contracts.StepSucceeded:
		t.Fatalf("history not moved to steps: %+v", got.Steps)
	case got.Interrupt == nil || got.Interrupt.ActionID != "a2" || got.LLMCalls["planner"] != 1:
		t.Fatalf("interrupt or counters lost: %+v %v", got.Interrupt, got.LLMCalls)
	case !got.UpdatedAt.Equal(time.Date(2025, 11, 2, 9, 0, 5, 500_000_000, time.UTC)):
		t.Fatalf("updated_at %v", got.UpdatedAt)
	}
}
