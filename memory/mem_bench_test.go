package memory_test

import (
	"fmt"
	"testing"

	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/storetest"
)

func BenchmarkSave(b *testing.B) { storetest.BenchSave(b, memory.NewMemStore(), 10, storetest.Meter{}) }

// BenchmarkConcurrentRuns: 100 runs at once, of 10 and of 100 steps.
func BenchmarkConcurrentRuns(b *testing.B) {
	for _, steps := range []int{10, 100} {
		b.Run(fmt.Sprintf("100x%d", steps), func(b *testing.B) {
			storetest.BenchConcurrentRuns(b, memory.NewMemStore(), 100, steps, storetest.Meter{})
		})
	}
}
