package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/embedded"
	"github.com/ordo-run/ordo/memory/storetest"
)

func noopPlan(n int) string {
	var acts []string
	for i := range n {
		req := `[]`
		if i > 0 {
			req = fmt.Sprintf(`["k%d"]`, i-1)
		}
		acts = append(acts, fmt.Sprintf(`{"id":"a%d","tool":"noop.run","intent":"other","requires":%s,"produces":["k%d"]}`, i, req, i))
	}
	return `{"version":"1.0","goal":"noop","timezone":"UTC","constraints":{"max_actions":64},"actions":[` + strings.Join(acts, ",") + `]}`
}

// BenchmarkOrchestrationPerStep: a chain of N no-op in-process tools, no
// model, in-memory store; reports ns per step (bind, checkpoint before and
// after the call, verify, produce).
func BenchmarkOrchestrationPerStep(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			out := `{"type":"object","required":["v"],"properties":{"v":{"type":"integer"}}}`
			produces := map[string]string{} // every action yields its own key
			for i := range n {
				produces[fmt.Sprintf("k%d", i)] = "$.v"
			}
			tt := newTools(b, tool("noop.run", contracts.RiskRead, `{"type":"object"}`, out, produces, returns(map[string]any{"v": 1})))
			plan := mustPlan(b, noopPlan(n))
			e := New(Config{}, Deps{Tools: tt})
			b.ResetTimer()
			for b.Loop() {
				run, err := e.Run(context.Background(), Request{Plan: plan})
				if err != nil || run.Status != contracts.RunCompleted {
					b.Fatalf("%v %+v", err, run.Error)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
		})
	}
}

// BenchmarkInterruptResumeCycle: plan -> step_approval interrupt
// (checkpointed) -> a fresh engine resumes from the store -> done, on the
// in-memory store and the embedded file (synchronous=FULL), leases on.
func BenchmarkInterruptResumeCycle(b *testing.B) {
	tt := newTools(b, deleteTool())
	plan := mustPlan(b, `{"version":"1.0","goal":"d","timezone":"UTC","actions":[
	 {"id":"d1","tool":"notes.delete_page","intent":"write","requires":[],"produces":["deleted"],"inputs":{"page":"p"}}]}`)
	stores := []struct {
		name string
		open func() memory.Checkpointer
	}{
		{"memory", func() memory.Checkpointer { return newStore() }},
		{"memory-no-leases", func() memory.Checkpointer { return struct{ memory.Checkpointer }{newStore()} }},
		{"embedded", func() memory.Checkpointer {
			st, err := embedded.Open(filepath.Join(b.TempDir(), "ordo.db"))
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
	}
	cycle := func(store memory.Checkpointer) {
		ctx := context.Background()
		run, err := New(Config{}, Deps{Tools: tt, Store: store}).Run(ctx, Request{Plan: plan})
		if err != nil || run.Status != contracts.RunInterrupted {
			b.Fatal(err)
		}
		run, err = New(Config{}, Deps{Tools: tt, Store: store}).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove})
		if err != nil || run.Status != contracts.RunCompleted {
			b.Fatal(err)
		}
	}
	for _, s := range stores {
		b.Run(s.name, func(b *testing.B) {
			store := s.open()
			defer store.Close()
			for b.Loop() {
				cycle(store)
			}
		})
	}
	// ratio runs the in-memory cycle, the embedded one and the embedded
	// store's floor for a cycle — the three writes that must be durable (a
	// new run, one waiting for a person, one finished), with no engine —
	// in turn, and reports their medians: floor-ratio, (in-memory cycle +
	// floor) / in-memory cycle, is the best ratio any engine could reach on
	// this disk. sync-µs is the disk's own price of one durable write (a
	// 4 KiB append and fdatasync, what SQLite does at a commit), so
	// sync-ratio, (in-memory cycle + three syncs) / in-memory cycle, is the
	// floor of a store that cost no CPU at all.
	b.Run("ratio", func(b *testing.B) {
		mem, emb, bare := stores[0].open(), stores[2].open(), stores[2].open()
		defer mem.Close()
		defer emb.Close()
		defer bare.Close()
		disk, err := os.OpenFile(filepath.Join(b.TempDir(), "sync"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		defer disk.Close()
		page := make([]byte, 4096)
		sync := func() {
			if _, err := disk.Write(page); err != nil {
				b.Fatal(err)
			}
			if err := unix.Fdatasync(int(disk.Fd())); err != nil {
				b.Fatal(err)
			}
		}
		floor := func(i int) {
			ctx := context.Background()
			run := storetest.SimpleRun(fmt.Sprintf("floor-%d", i), "bench", contracts.RunRunning, 1, storetest.Base)
			for _, st := range []contracts.RunStatus{contracts.RunRunning, contracts.RunInterrupted, contracts.RunCompleted} {
				run.Status = st
				if err := bare.Save(ctx, run); err != nil {
					b.Fatal(err)
				}
				run.Seq++
			}
		}
		var ml, el, fl, sl []time.Duration
		i := 0
		for b.Loop() {
			t0 := time.Now()
			cycle(mem)
			t1 := time.Now()
			cycle(emb)
			t2 := time.Now()
			floor(i)
			t3 := time.Now()
			sync()
			ml, el, fl, sl = append(ml, t1.Sub(t0)), append(el, t2.Sub(t1)), append(fl, t3.Sub(t2)), append(sl, time.Since(t3))
			i++
		}
		m, e, f, s := median(ml), median(el), median(fl), median(sl)
		b.ReportMetric(float64(m.Microseconds()), "memory-µs")
		b.ReportMetric(float64(e.Microseconds()), "embedded-µs")
		b.ReportMetric(float64(f.Microseconds()), "floor-µs")
		b.ReportMetric(float64(s.Microseconds()), "sync-µs")
		b.ReportMetric(float64(e)/float64(m), "ratio")
		b.ReportMetric(float64(m+f)/float64(m), "floor-ratio")
		b.ReportMetric(float64(m+3*s)/float64(m), "sync-ratio")
	})
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
