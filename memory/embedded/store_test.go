package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/contracts"
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

// TestNewFileIsPrivate: a store created in a directory others may read
// (a data dir made beforehand, mode 0755) is readable by its user only,
// its -wal and -shm too: runs hold goals, tool results and answers. SQLite
// made it 0644, readable by every local user.
func TestNewFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ordo.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Save(context.Background(), storetest.SimpleRun("r1", "u", contracts.RunRunning, 1, storetest.Base)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s is %v, want -rw-------", filepath.Base(f), st.Mode().Perm())
		}
	}
}
