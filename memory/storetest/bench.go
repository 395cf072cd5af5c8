package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// stepsPerRun is how many checkpoints the benchmarks write per run.
const stepsPerRun = 10

// benchRun is checkpoint seq of a run that has done seq-1 steps, each with
// a small payload and result, roughly what the engine writes per step.
func benchRun(id string, seq int64) *contracts.Run {
	run := SimpleRun(id, "bench", contracts.RunRunning, seq, Base.Add(time.Duration(seq)*time.Second))
	run.State = map[string]json.RawMessage{}
	for i := range seq - 1 {
		run.Steps = append(run.Steps, contracts.StepRecord{ActionID: fmt.Sprintf("a%d", i), Tool: "notes.write",
			PlanVersion: 1, Attempt: 1, IdempotencyKey: fmt.Sprintf("%s/v1/a%d/1", id, i), Status: contracts.StepSucceeded,
			Payload:   json.RawMessage(`{"title":"weekly report","body":"numbers for the week, twelve rows"}`),
			Result:    json.RawMessage(`{"id":"note-1234","url":"https://notes.example/n/1234"}`),
			StartedAt: Base, EndedAt: Base.Add(time.Second)})
		run.State[fmt.Sprintf("note_%d", i)] = json.RawMessage(`{"id":"note-1234"}`)
	}
	return run
}

// BenchSave measures one checkpoint write per step of runs of ten steps
// and reports the p50 and p95 latency of a single Save.
func BenchSave(b *testing.B, s memory.Checkpointer) {
	ctx := context.Background()
	// Build the values first: only Save is timed.
	runs := make([]*contracts.Run, b.N)
	for i := range b.N {
		runs[i] = benchRun(fmt.Sprintf("bench-%d", i/stepsPerRun), int64(i%stepsPerRun)+1)
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if err := s.Save(ctx, runs[i]); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	b.StopTimer()
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	at := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.95), "p95-ns")
}

// BenchConcurrentRuns drives 100 runs at once, each writing ten
// checkpoints (and loading once, as a resume would), against one store, and
// reports checkpoints written per second.
func BenchConcurrentRuns(b *testing.B, s memory.Checkpointer) {
	const runs = 100
	ctx := context.Background()
	var total time.Duration
	for n := range b.N {
		vals := make([][]*contracts.Run, runs)
		for r := range runs {
			for seq := int64(1); seq <= stepsPerRun; seq++ {
				vals[r] = append(vals[r], benchRun(fmt.Sprintf("conc-%d-%d", n, r), seq))
			}
		}
		errs := make(chan error, runs)
		var wg sync.WaitGroup
		t0 := time.Now()
		for r := range runs {
			wg.Go(func() {
				for _, v := range vals[r] {
					if err := s.Save(ctx, v); err != nil {
						errs <- err
						return
					}
				}
				if _, err := s.Load(ctx, vals[r][0].ID); err != nil {
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
	b.ReportMetric(float64(b.N*runs*stepsPerRun)/total.Seconds(), "checkpoints/s")
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/100runs")
}
