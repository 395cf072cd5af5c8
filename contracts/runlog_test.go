package contracts_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/storetest"
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

// FuzzRunDeltaJSON: AppendJSON writes every entry exactly as json.Marshal
// does, and fails where it fails. The entry comes from JSON; text, raw
// values and times are then set to what JSON decoding could not give
// (invalid UTF-8, control and HTML characters, loose raw JSON, times
// RFC 3339 cannot hold).
func FuzzRunDeltaJSON(f *testing.F) {
	f.Add(`{"seq":2,"updated_at":"2026-11-24T09:00:00.5Z","status":"running","goal":"g","steps":[{"action_id":"a","tool":"t.x","plan_version":1,"attempt":1,`+
		`"idempotency_key":"r/v1/a/1","payload":{"q":1},"result":{"v":[1,2]},"produced":["k"],"status":"succeeded","started_at":"2026-11-24T09:00:00Z","ended_at":"2026-11-24T09:00:01Z"}],"state":{"k":1}}`,
		"plain", []byte(`{"a": [1, "<b>"]}`), int64(1764000000), 0)
	f.Add(`{"seq":3,"replan_count":2,"llm_calls":{"planner":1,"tool":3},"usage":{"total":{"cost_usd":0}},"interrupt":{"kind":"clarify","message":"?"},`+
		`"result":{"answer":"a","composer":"template"},"error":{"code":6001,"message":"m","details":{"x":[1]}},"plans":[{"version":2,"source":"replanner","plan":{"actions":[]}}],`+
		`"policy":{"a":{"decision":"allow"}},"decisions":[{"interrupt":{"kind":"clarify"},"decision":{"decision":"answer"}}],"steps":[{"status":"failed","error":{"code":1}}]}`,
		"\u2028<&>\"\\\x01\xff한", []byte("\t[1 ,\n2]"), int64(-70000000000), 25*3600)
	f.Add(`{"seq":1,"run":{"id":"r","status":"pending"}}`, "", []byte(`{`), int64(0), -3600)
	f.Add(`{"seq":4,"state":{"a":null,"b":"x"},"steps":[{}]}`, "k\u2029", []byte(nil), int64(253402300800), 59)
	f.Fuzz(func(t *testing.T, entry, text string, raw []byte, unix int64, offset int) {
		var d contracts.RunDelta
		if json.Unmarshal([]byte(entry), &d) != nil {
			return
		}
		same := func(what string, got []byte, gerr error, want []byte, werr error) {
			t.Helper()
			if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
				t.Fatalf("%s: error %v, json.Marshal's %v", what, gerr, werr)
			}
			if gerr == nil && string(got) != "prefix"+string(want) {
				t.Fatalf("%s:\n%s\njson.Marshal:\n%s", what, got[len("prefix"):], want)
			}
		}
		check := func(what string) {
			t.Helper()
			got, gerr := d.AppendJSON([]byte("prefix"))
			want, werr := json.Marshal(&d)
			same(what, got, gerr, want, werr)
			if d.Run != nil {
				return
			}
			// The same entry as a logged run's next one (Run.AppendDelta).
			run := &contracts.Run{ID: "r", Status: contracts.RunRunning, Seq: d.Seq - 1}
			run.MarkLogged()
			run.Seq, run.UpdatedAt, run.Status, run.Goal, run.ReplanCount = d.Seq, d.UpdatedAt, d.Status, d.Goal, d.ReplanCount
			run.LLMCalls, run.Usage, run.Interrupt, run.Result, run.Error = d.LLMCalls, d.Usage, d.Interrupt, d.Result, d.Error
			run.Plans, run.Policy, run.Steps, run.Decisions, run.State = d.Plans, d.Policy, d.Steps, d.Decisions, d.State
			got, whole, gerr := run.AppendDelta([]byte("prefix"))
			want, werr = json.Marshal(run.Delta())
			if whole {
				t.Fatalf("%s: a logged run's entry is whole", what)
			}
			same(what+" (AppendDelta)", got, gerr, want, werr)
			// The whole run, as a checkpoint holds it (Run.AppendJSON).
			run.UserID, run.SessionID, run.Context, run.CreatedAt = d.Goal, d.Goal, d.Goal, d.UpdatedAt
			got, gerr = run.AppendJSON([]byte("prefix"))
			want, werr = json.Marshal(run)
			same(what+" (Run.AppendJSON)", got, gerr, want, werr)
		}
		check("decoded")
		d.Goal, d.Status = text, contracts.RunStatus(text)
		if d.LLMCalls != nil {
			d.LLMCalls[text] = len(text)
		}
		if d.State != nil {
			d.State[text] = raw
		}
		at := time.Unix(unix, int64(offset)).In(time.FixedZone("z", offset))
		d.UpdatedAt = at
		for i := range d.Steps {
			s := &d.Steps[i]
			s.ActionID, s.IdempotencyKey, s.Produced = text, text, append(s.Produced, text)
			s.StartedAt, s.EndedAt = at, at.Add(time.Duration(offset))
			if i%2 == 0 {
				s.Result = raw
			} else {
				s.Payload = raw
			}
		}
		check("changed")
	})
}

// Run.AppendJSON writes a run with every field set exactly as json.Marshal
// does (a field added to Run and not to AppendJSON fails here, once the
// fixture sets it, which storetest's RoundTrip requires).
func TestRunAppendJSON(t *testing.T) {
	run := storetest.FullRun("full", 3)
	run.Steps = append(run.Steps, storetest.LogStep("full", 1, "k<&>", run.UpdatedAt))
	run.State["k<&>"] = json.RawMessage("[1, \"<b>\"]")
	v := reflect.ValueOf(run).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).IsExported() && v.Field(i).IsZero() {
			t.Fatalf("FullRun leaves Run.%s unset", v.Type().Field(i).Name)
		}
	}
	got, err := run.AppendJSON(nil)
	want, werr := json.Marshal(run)
	if err != nil || werr != nil || string(got) != string(want) {
		t.Fatalf("AppendJSON:\n%s\njson.Marshal:\n%s\n%v %v", got, want, err, werr)
	}
	if cap(got) != len(got) && cap(got) > 2*len(got) {
		t.Fatalf("%d bytes in a buffer of %d", len(got), cap(got))
	}
	run.State["bad"] = json.RawMessage(`{`)
	_, err = run.AppendJSON(nil)
	_, werr = json.Marshal(run)
	if err == nil || werr == nil || err.Error() != werr.Error() {
		t.Fatalf("invalid state: %v, json.Marshal's %v", err, werr)
	}
}
