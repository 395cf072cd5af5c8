package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// The in-memory store's writes keep no snapshot after a new run's; the
// first Load that NeedSnapshot asks one of keeps the run it folded, and
// the runs loaded before and after it are the run saved.
func TestMemStoreSnapshotsOnRead(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	at := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	run := &contracts.Run{ID: "run_snap", Goal: "g", Status: contracts.RunRunning, Seq: 1, CreatedAt: at, UpdatedAt: at}
	save := func() {
		t.Helper()
		if err := s.Save(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	save()
	for i := range 40 {
		key := fmt.Sprintf("k%d", i)
		run.Seq++
		run.Steps = append(run.Steps, contracts.StepRecord{ActionID: fmt.Sprintf("a%d", i), Tool: "t.x", PlanVersion: 1, Attempt: 1,
			Result: json.RawMessage(`{"v":1}`), Produced: []string{key}, Status: contracts.StepSucceeded, StartedAt: at})
		if run.State == nil {
			run.State = map[string]json.RawMessage{}
		}
		run.State[key] = json.RawMessage(`1`)
		save()
	}
	run.Seq++
	run.Status, run.Result = contracts.RunCompleted, &contracts.RunResult{Answer: "done", Composer: "template"}
	save()
	r := s.runs[run.ID]
	if r.snapSeq != 1 {
		t.Fatalf("a write kept a snapshot at %d", r.snapSeq)
	}
	want, err := EncodeRun(run)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := s.Load(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.snapSeq != run.Seq || r.tail != 0 {
			t.Fatalf("load %d: snapshot at %d with %d bytes after it, want one at %d", i, r.snapSeq, r.tail, run.Seq)
		}
		if data, err := EncodeRun(got); err != nil || !bytes.Equal(data, want) {
			t.Fatalf("load %d gives\n%s\nwant\n%s (%v)", i, data, want, err)
		}
	}
}

// Entries an older build wrote, each with the goal, still fold (the
// database stores check theirs with storetest.RequireGoalInEveryEntry).
func TestMemStoreGoalInEveryEntry(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore()
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	run := &contracts.Run{ID: "old", Goal: "g", Status: contracts.RunRunning, Seq: 1, CreatedAt: at, UpdatedAt: at}
	for ; run.Seq <= 4; run.Seq++ {
		run.ReplanCount = int(run.Seq)
		if err := s.Save(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	for i, e := range s.runs["old"].entries[1:] {
		var doc map[string]any
		if err := json.Unmarshal(e.data, &doc); err != nil || doc["goal"] != nil {
			t.Fatalf("entry %d: %s, %v", i+2, e.data, err)
		}
		doc["goal"] = fmt.Sprint("g", i+2)
		s.runs["old"].entries[i+1].data, _ = json.Marshal(doc)
	}
	got, err := s.Load(ctx, "old")
	if err != nil || got.Goal != "g4" || got.ReplanCount != 4 {
		t.Fatalf("load: %+v, %v", got, err)
	}
}
