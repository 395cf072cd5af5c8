package contracts_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// logRun is a run that has done n steps, each producing one state key.
func logRun(t testing.TB) *contracts.Run {
	t.Helper()
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	return &contracts.Run{ID: "run_log", UserID: "ada", Goal: "log", Status: contracts.RunPending, CreatedAt: at, UpdatedAt: at,
		Options: contracts.RunOptions{Timezone: "UTC"}, Seq: 1}
}

// roundTrip encodes run's delta as a store would, applies it to folded,
// and checks both agree.
func roundTrip(t *testing.T, run, folded *contracts.Run) int {
	t.Helper()
	d := run.Delta()
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back contracts.RunDelta
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if err := folded.Apply(&back); err != nil {
		t.Fatalf("apply seq %d: %v", back.Seq, err)
	}
	run.MarkLogged()
	want, _ := json.Marshal(run)
	got, _ := json.Marshal(folded)
	if string(want) != string(got) {
		t.Fatalf("seq %d: folded run differs\nwant %s\ngot  %s", run.Seq, want, got)
	}
	return len(data)
}

// Every change the engine makes to a run travels in its delta, the delta
// of a step does not grow with the run, and folding rebuilds the run.
func TestRunDeltaFoldsBack(t *testing.T) {
	run := logRun(t)
	folded := &contracts.Run{}
	if n := roundTrip(t, run, folded); n == 0 {
		t.Fatal("empty first entry")
	}
	next := func() { run.Seq++; run.UpdatedAt = run.UpdatedAt.Add(time.Second) }

	next()
	run.Status = contracts.RunInterrupted
	run.Plans = append(run.Plans, contracts.PlanRevision{Version: 1, Source: "planner", Plan: contracts.Plan{Goal: "log"}})
	run.Policy = map[string]contracts.PolicyDecision{"a1": {Decision: contracts.PolicyAllow}}
	run.Interrupt = &contracts.Interrupt{Kind: contracts.InterruptPlanApproval, Message: "approve"}
	run.LLMCalls = map[string]int{"planner": 1}
	run.Usage.Add("planner", contracts.TokenUsage{InputTokens: 900, OutputTokens: 120, CachedTokens: 512, CostUSD: 0.0021, Models: []string{"gpt-b"}})
	roundTrip(t, run, folded)

	next()
	run.Decisions = append(run.Decisions, contracts.DecisionRecord{Interrupt: *run.Interrupt, Decision: contracts.Decision{Kind: contracts.DecisionApprove, By: "ada"}})
	run.Interrupt = nil
	run.Status = contracts.RunRunning
	run.Goal = "log, clarified"
	roundTrip(t, run, folded)

	var sizes []int
	for i := range 200 {
		next()
		key := fmt.Sprintf("k%d", i)
		if run.State == nil {
			run.State = map[string]json.RawMessage{}
		}
		run.State[key] = json.RawMessage(`{"id":"x"}`)
		run.Steps = append(run.Steps, contracts.StepRecord{ActionID: fmt.Sprintf("a%03d", i), Tool: "t.x", PlanVersion: 1, Attempt: 1,
			Status: contracts.StepSucceeded, Produced: []string{key}, Result: json.RawMessage(`{"id":"x"}`)})
		sizes = append(sizes, roundTrip(t, run, folded))
	}
	if first, last := sizes[9], sizes[199]; last > first+8 {
		t.Fatalf("the entry of step 200 is %d bytes, of step 10 %d: entries grow with the run", last, first)
	}

	next()
	run.Status = contracts.RunFailed
	run.Error = contracts.Errorf(contracts.CodeToolFailed, "boom")
	run.Result = &contracts.RunResult{Answer: "failed", Composer: "template"}
	run.ReplanCount = 3
	run.Usage.Add("composer", contracts.TokenUsage{InputTokens: 300, OutputTokens: 40, CostUSD: 0.0004, Models: []string{"gpt-a"}})
	roundTrip(t, run, folded)
	if u := folded.Usage; u.Total.InputTokens != 1200 || u.Total.CachedTokens != 512 || !reflect.DeepEqual(u.Total.Models, []string{"gpt-a", "gpt-b"}) {
		t.Fatalf("folded usage %+v", u)
	}
	run.Usage.Add("composer", contracts.TokenUsage{InputTokens: 1})
	if folded.Usage.ByRole["composer"].InputTokens != 300 {
		t.Fatal("the folded run shares its usage with the run it was logged from")
	}

	d := &contracts.RunDelta{Seq: run.Seq + 2}
	if err := folded.Apply(d); contracts.CodeOf(err) != contracts.CodeCheckpointFormat {
		t.Fatalf("a gap in the log: %v", err)
	}
}

// A run never logged (built by hand, or a copy into another store) gives a
// whole-run entry, and FoldRun needs one first.
func TestRunDeltaWhole(t *testing.T) {
	run := logRun(t)
	run.Seq = 7
	d := run.Delta()
	if d.Run == nil || d.Kind() != "snapshot" {
		t.Fatalf("delta of a run never logged: %+v", d)
	}
	got, err := contracts.FoldRun([]contracts.RunDelta{*d})
	if err != nil || got.Seq != 7 || !reflect.DeepEqual(got.Goal, run.Goal) {
		t.Fatalf("fold: %+v %v", got, err)
	}
	if _, err := contracts.FoldRun([]contracts.RunDelta{{Seq: 1}}); contracts.CodeOf(err) != contracts.CodeCheckpointFormat {
		t.Fatalf("fold without a whole run: %v", err)
	}
}

// FuzzRunDelta: any entry a store could hold either folds or is refused
// with a code; it never panics.
func FuzzRunDelta(f *testing.F) {
	f.Add([]byte(`{"seq":1,"run":{"id":"r","status":"pending"}}`), []byte(`{"seq":2,"status":"running","steps":[{"action_id":"a","produced":["k"]}],"state":{"k":1}}`))
	f.Add([]byte(`{"seq":1,"run":{"id":"r"}}`), []byte(`{"seq":2,"plans":[{"version":1}],"interrupt":{"kind":"clarify"}}`))
	f.Add([]byte(`{"seq":1,"run":{"id":"r","usage":{"total":{"input_tokens":5}}}}`),
		[]byte(`{"seq":2,"usage":{"by_role":{"planner":{"input_tokens":9,"models":["m"]}},"total":{"input_tokens":9,"cost_usd":0.1}},"interrupt":{"kind":"budget_exceeded","budget":{"budget":"run.tokens","limit":5,"used":9}}}`))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		var entries []contracts.RunDelta
		for _, b := range [][]byte{first, second} {
			var d contracts.RunDelta
			if json.Unmarshal(b, &d) != nil {
				return
			}
			entries = append(entries, d)
		}
		run, err := contracts.FoldRun(entries)
		if err != nil {
			if contracts.CodeOf(err) == 0 {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		run.Seq++
		_ = run.Delta().Summary()
	})
}
