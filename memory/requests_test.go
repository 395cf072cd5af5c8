package memory_test

import (
	"testing"

	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/storetest"
)

func TestMemStoreRequests(t *testing.T) {
	storetest.Requests(t, memory.NewMemStore(), nil)
}
