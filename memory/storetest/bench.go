package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// benchStep appends step i of run to it as the engine does at a step
// boundary: a step record with a small payload and result, the state key
// it produced, the clock; the last step also finishes the run.
func benchStep(run *contracts.Run, i, steps int) {
	key := fmt.Sprintf("note_%d", i)
	at := Base.Add(time.Duration(i) * time.Second)
	run.Steps = append(run.Steps, contracts.StepRecord{ActionID: fmt.Sprintf("a%d", i), Tool: "notes.write",
		PlanVersion: 1, Attempt: 1, IdempotencyKey: fmt.Sprintf("%s/v1/a%d/1", run.ID, i), Status: contracts.StepSucceeded,
		Payload:   json.RawMessage(`{"title":"weekly report","body":"numbers for the week, twelve rows"}`),
		Result:    json.RawMessage(`{"id":"note-1234","url":"https://notes.example/n/1234"}`),
		Produced:  []string{key},
		StartedAt: at, EndedAt: at.Add(time.Millisecond)})
	if run.State == nil {
		run.State = map[string]json.RawMessage{}
	}
	run.State[key] = json.RawMessage(`{"id":"note-1234"}`)
	run.Seq++
	run.UpdatedAt = at.Add(time.Millisecond)
	if i == steps-1 {
		run.Status = contracts.RunCompleted
		run.Result = &contracts.RunResult{Answer: "done", Composer: "template"}
	}
}

// benchNew is a new run with a one-action-per-step plan, as the engine
// saves it first.
func benchNew(id string, steps int) *contracts.Run {
	run := SimpleRun(id, "bench", contracts.RunRunning, 1, Base)
	plan := contracts.Plan{Version: contracts.PlanVersion, Goal: run.Goal}
	for i := range steps {
		plan.Actions = append(plan.Actions, contracts.Action{ID: fmt.Sprintf("a%d", i), Tool: "notes.write", Intent: "write",
			Produces: []string{fmt.Sprintf("note_%d", i)}})
	}
	run.Plans = []contracts.PlanRevision{{Version: 1, Source: "caller", Plan: plan, CreatedAt: Base}}
	run.Policy = map[string]contracts.PolicyDecision{}
	return run
}

// Meter lets a benchmark report what a store wrote, where the store can
// say: Stored is the bytes the store's tables hold now, WAL the bytes of
// write-ahead log written so far (both may be nil).
type Meter struct {
	Stored func() int64
	WAL    func() int64
}

func (m Meter) read() (stored, wal int64) {
	if m.Stored != nil {
		stored = m.Stored()
	}
	if m.WAL != nil {
		wal = m.WAL()
	}
	return
}

func (m Meter) report(b *testing.B, stored0, wal0 int64, steps int) {
	stored, wal := m.read()
	if m.Stored != nil {
		b.ReportMetric(float64(stored-stored0)/float64(steps), "stored-B/step")
	}
	if m.WAL != nil {
		b.ReportMetric(float64(wal-wal0)/float64(steps), "wal-B/step")
	}
}

// BenchSave measures the Save of one step boundary, the way the engine
// makes them: each run is created (Save at seq 1, not timed), loaded once,
// and then saved after each of its steps (timed), so every timed Save
// appends one step record. b.N is the number of timed Saves; runs have
// steps steps each. It reports the p50 and p95 latency of a Save.
func BenchSave(b *testing.B, s memory.Checkpointer, steps int, m Meter) {
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	live := map[string]*contracts.Run{}
	stored0, wal0 := m.read()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		id := fmt.Sprintf("bench-%d", n/steps)
		i := n % steps
		var run *contracts.Run
		if i == 0 {
			if err := s.Save(ctx, benchNew(id, steps)); err != nil {
				b.Fatal(err)
			}
			var err error
			if run, err = s.Load(ctx, id); err != nil {
				b.Fatal(err)
			}
			live[id] = run
		}
		run = live[id]
		benchStep(run, i, steps)
		b.StartTimer()
		t0 := time.Now()
		if err := s.Save(ctx, run); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		if i == steps-1 {
			delete(live, id)
		}
	}
	b.StopTimer()
	reportPercentiles(b, lat)
	m.report(b, stored0, wal0, b.N)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.95), "p95-ns")
}

// BenchConcurrentRuns drives runs runs at once against one store, as the
// engine would: each is created (Save at seq 1), loaded once, saved after
// each of its steps steps (one step record appended per Save, the last
// finishing the run), and loaded again at the end, as a client reading the
// result would. It reports steps (Saves after a step) per second and, where
// m can say, stored and write-ahead-log bytes per step.
func BenchConcurrentRuns(b *testing.B, s memory.Checkpointer, runs, steps int, m Meter) {
	ctx := context.Background()
	var total time.Duration
	stored0, wal0 := m.read()
	for n := range b.N {
		errs := make(chan error, runs)
		var wg sync.WaitGroup
		t0 := time.Now()
		for r := range runs {
			wg.Go(func() {
				id := fmt.Sprintf("conc-%d-%d", n, r)
				if err := s.Save(ctx, benchNew(id, steps)); err != nil {
					errs <- err
					return
				}
				run, err := s.Load(ctx, id)
				if err != nil {
					errs <- err
					return
				}
				for i := range steps {
					benchStep(run, i, steps)
					if err := s.Save(ctx, run); err != nil {
						errs <- err
						return
					}
				}
				if _, err := s.Load(ctx, id); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		total += time.Since(t0)
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*runs*steps)/total.Seconds(), "steps/s")
	m.report(b, stored0, wal0, b.N*runs*steps)
}

// BenchLongGoal saves runs runs of steps steps each, one after another,
// whose goal is LongGoal (10,000 bytes), and reports the bytes stored per
// step (m.Stored): what a long goal costs a run's log.
func BenchLongGoal(b *testing.B, s memory.Checkpointer, runs, steps int, m Meter) {
	ctx := context.Background()
	stored0, wal0 := m.read()
	save := func(run *contracts.Run) {
		if err := s.Save(ctx, run); err != nil {
			b.Fatal(err)
		}
	}
	for n := range b.N {
		for r := range runs {
			run := benchNew(fmt.Sprintf("goal-%d-%d", n, r), steps)
			run.Goal = LongGoal
			save(run)
			for i := range steps {
				benchStep(run, i, steps)
				save(run)
			}
		}
	}
	m.report(b, stored0, wal0, b.N*runs*steps)
}

// BigRun is run id holding bytes of step results and state (half each,
// in 1 MiB strings: what agent.MaxRunBytes bounds), saved to s one step
// at a time as the engine saves it (each entry a step; snapshots as the
// store takes them on the way), and still running.
func BigRun(tb testing.TB, s memory.Checkpointer, id string, bytes int) *contracts.Run {
	ctx := context.Background()
	run := benchNew(id, 1)
	value := json.RawMessage(`"` + strings.Repeat("x", 1<<20-2) + `"`)
	run.State = map[string]json.RawMessage{}
	for i := range bytes / (2 << 20) {
		if err := s.Save(ctx, run); err != nil {
			tb.Fatal(err)
		}
		key := fmt.Sprintf("text_%d", i)
		at := Base.Add(time.Duration(i) * time.Second)
		run.Steps = append(run.Steps, contracts.StepRecord{ActionID: "a0", Tool: "notes.write", PlanVersion: 1, Attempt: i + 1,
			Payload: json.RawMessage(`{}`), Result: value, Produced: []string{key}, Status: contracts.StepSucceeded, StartedAt: at, EndedAt: at})
		run.State[key] = value
		run.Seq++
	}
	return run
}

// BenchSnapshot measures the Save that snapshots a run holding bytes of
// results and state (BigRun): the save that stops it at an interrupt
// (timed). -benchmem's B/op is what that Save allocates.
func BenchSnapshot(b *testing.B, s memory.Checkpointer, bytes int) {
	ctx := context.Background()
	b.ReportAllocs()
	b.StopTimer()
	for n := range b.N {
		run := BigRun(b, s, fmt.Sprint("big-", n), bytes)
		run.Status = contracts.RunInterrupted
		run.Interrupt = &contracts.Interrupt{Kind: contracts.InterruptStepApproval, Message: "go on?", CreatedAt: Base}
		b.StartTimer()
		if err := s.Save(ctx, run); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Delete(ctx, []string{run.ID}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchWhole measures the Save of a new run that already holds bytes of
// results and state (BigRun), as a fork of a large run is saved: one
// whole-run entry and its snapshot (timed). -benchmem's B/op is what that
// Save allocates.
func BenchWhole(b *testing.B, s memory.Checkpointer, bytes int) {
	ctx := context.Background()
	run := BigRun(b, memory.NewMemStore(), "big", bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for n := range b.N {
		run.ID, run.Seq = fmt.Sprint("whole-", n), 1
		if err := s.Save(ctx, run); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Delete(ctx, []string{run.ID}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
