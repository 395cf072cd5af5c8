package embedded

import (
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

// FULL is what Open uses; NORMAL is measured to show what durability costs.
func BenchmarkSave(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run(sync, func(b *testing.B) { storetest.BenchSave(b, benchStore(b, sync)) })
	}
}

func BenchmarkConcurrentRuns(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run(sync, func(b *testing.B) { storetest.BenchConcurrentRuns(b, benchStore(b, sync)) })
	}
}
