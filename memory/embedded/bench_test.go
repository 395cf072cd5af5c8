package embedded

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/memory/storetest"
)

func benchStore(b *testing.B, synchronous string) *Store {
	s, err := open(filepath.Join(b.TempDir(), "ordo.db"), synchronous)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// meter reports the bytes the file's live pages hold (WAL pages included).
func meter(s *Store) storetest.Meter {
	return storetest.Meter{Stored: func() int64 {
		var pages, free, size int64
		ctx := context.Background()
		if err := s.r.QueryRowContext(ctx, `SELECT page_count, freelist_count, page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`).
			Scan(&pages, &free, &size); err != nil {
			panic(err)
		}
		return (pages - free) * size
	}}
}

// FULL is what Open uses; NORMAL is measured to show what durability costs.
func BenchmarkSave(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run(sync, func(b *testing.B) {
			s := benchStore(b, sync)
			storetest.BenchSave(b, s, 10, meter(s))
		})
	}
}

// BenchmarkConcurrentRuns: 100 runs at once, of 10 and of 100 steps; also
// reports how many commits (syncs, under FULL) each step cost.
func BenchmarkConcurrentRuns(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		for _, steps := range []int{10, 100} {
			b.Run(fmt.Sprintf("%s/100x%d", sync, steps), func(b *testing.B) {
				s := benchStore(b, sync)
				c0 := s.wr.commits.Load()
				storetest.BenchConcurrentRuns(b, s, 100, steps, meter(s))
				b.ReportMetric(float64(s.wr.commits.Load()-c0)/float64(b.N*100*steps), "commits/step")
			})
		}
	}
}

// BenchmarkLongGoal: stored bytes per step of 10 runs × 100 steps whose
// goal is 10,000 bytes.
func BenchmarkLongGoal(b *testing.B) {
	s := benchStore(b, "FULL")
	storetest.BenchLongGoal(b, s, 10, 100, meter(s))
}

// BenchmarkSnapshot64MiB: the Save that snapshots a run at the run bound
// (64 MiB of results and state) at an interrupt.
func BenchmarkSnapshot64MiB(b *testing.B) {
	storetest.BenchSnapshot(b, benchStore(b, "FULL"), 64<<20)
}

// BenchmarkOpen: opening a store where there is no file (built beside it
// and linked in whole, one sync), an empty file (migrated in place, as
// every new file was: seven syncs), and an up-to-date file (no write).
//
//	go test -run '^$' -bench Open -benchtime 50x ./memory/embedded/
func BenchmarkOpen(b *testing.B) {
	for _, file := range []string{"none", "empty", "up-to-date"} {
		b.Run(file, func(b *testing.B) {
			dir := b.TempDir()
			if file == "up-to-date" {
				s, err := Open(filepath.Join(dir, "ordo.db"))
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			for i := range b.N {
				path := filepath.Join(dir, "ordo.db")
				if file != "up-to-date" {
					path = filepath.Join(dir, fmt.Sprint(i), "ordo.db")
				}
				if file == "empty" {
					if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(path, nil, 0o600); err != nil {
						b.Fatal(err)
					}
				}
				s, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := s.Close(); err != nil { // closing checkpoints the WAL: not part of opening
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
