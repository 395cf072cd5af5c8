package memory_test

import (
	"testing"

	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/storetest"
)

func TestMemStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Checkpointer { return memory.NewMemStore() })
}
