package memory_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ordo-run/ordo/contracts"
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

// BenchmarkEncodeRun64MiB: the checkpoint of a run at the run bound
// (64 MiB of results and state), as every store encodes its snapshots,
// and json.Marshal of the same run (what EncodeRun did before), in turn.
func BenchmarkEncodeRun64MiB(b *testing.B) {
	run := storetest.BigRun(b, memory.NewMemStore(), "big", 64<<20)
	for _, enc := range []struct {
		name string
		fn   func(*contracts.Run) ([]byte, error)
	}{
		{"json.Marshal", func(r *contracts.Run) ([]byte, error) { return json.Marshal(r) }},
		{"EncodeRun", memory.EncodeRun},
	} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				data, err := enc.fn(run)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
			}
		})
	}
}

// BenchmarkSnapshot64MiB: the in-memory store's Save of such a run at an
// interrupt (a whole snapshot).
func BenchmarkSnapshot64MiB(b *testing.B) {
	storetest.BenchSnapshot(b, memory.NewMemStore(), 64<<20)
}
