package embedded_test

import (
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/embedded"
	"github.com/ordo-run/ordo/memory/storetest"
)

func openTemp(t testing.TB) *embedded.Store {
	s, err := embedded.Open(filepath.Join(t.TempDir(), "data", "ordo.db"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Checkpointer { return openTemp(t) })
}
