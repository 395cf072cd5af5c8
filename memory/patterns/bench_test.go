package patterns_test

import (
	"fmt"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/patterns"
)

// filled returns an in-memory store holding n distinct goals' plans and
// tool records for one user (and as many for another, to be filtered out).
func filled(b *testing.B, dir string, n int) *patterns.Memory {
	m, err := patterns.Open(dir, nil, patterns.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		for _, u := range []string{"ann", "bob"} {
			goal := fmt.Sprintf("task %d: sync project %d notes to channel %d", i, i*7, i*13)
			r := finishedRun(u, goal, contracts.RunCompleted,
				step{fmt.Sprintf("svc%d.read", i%50), fmt.Sprintf("read project %d notes", i), true, 5},
				step{fmt.Sprintf("svc%d.post", i%40), fmt.Sprintf("post to channel %d", i*13), true, 5})
			if err := m.Collect(b.Context(), r); err != nil {
				b.Fatal(err)
			}
		}
	}
	return m
}

// BenchmarkCollect: consolidating one finished two-step run into a store
// that already holds 500 goals per user (in memory, and persisted).
func BenchmarkCollect(b *testing.B) {
	for _, mode := range []string{"memory", "disk"} {
		b.Run(mode, func(b *testing.B) {
			dir := ""
			if mode == "disk" {
				dir = b.TempDir()
			}
			m := filled(b, dir, 500)
			run := finishedRun("ann", report, contracts.RunCompleted, step{"chat.post", "post the report", true, 1}, step{"mail.send", "mail it", true, 1})
			b.ResetTimer()
			for b.Loop() {
				if err := m.Collect(b.Context(), run); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQueries: the per-run lookups the engine makes, over 500 goals
// (1,000 plan and 2,000 tool records across two users).
func BenchmarkQueries(b *testing.B) {
	m := filled(b, "", 500)
	goal := "task 42: sync project 294 notes to channel 546"
	b.Run("Examples", func(b *testing.B) {
		for b.Loop() {
			if ex, err := m.Examples(b.Context(), "ann", goal, 3); err != nil || len(ex) == 0 {
				b.Fatal(ex, err)
			}
		}
	})
	b.Run("ToolAdvice", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.ToolAdvice(b.Context(), "ann", "read project 42 notes"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("List", func(b *testing.B) {
		for b.Loop() {
			if rs, err := m.List(b.Context(), "ann", ""); err != nil || len(rs) < 1000 {
				b.Fatal(len(rs), err)
			}
		}
	})
}
