package embedded_test

import (
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/embedded"
	"github.com/ordo-run/ordo/memory/storetest"
)

func TestRequests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ordo.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.Requests(t, s, func() memory.Requester {
		other, err := embedded.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		return other
	})
}
