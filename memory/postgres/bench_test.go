package postgres_test

import (
	"testing"

	"github.com/ordo-run/ordo/memory/storetest"
)

func BenchmarkSave(b *testing.B) {
	s := openTest(b)
	defer s.Close()
	storetest.BenchSave(b, s)
}

func BenchmarkConcurrentRuns(b *testing.B) {
	s := openTest(b)
	defer s.Close()
	storetest.BenchConcurrentRuns(b, s)
}
