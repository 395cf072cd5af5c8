package memory_test

import (
	"testing"

	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/storetest"
)

func BenchmarkSave(b *testing.B) { storetest.BenchSave(b, memory.NewMemStore()) }

func BenchmarkConcurrentRuns(b *testing.B) { storetest.BenchConcurrentRuns(b, memory.NewMemStore()) }
