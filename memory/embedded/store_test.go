package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// TestOldFileMadePrivate: a store an older Ordo made (0644, its -wal and
// -shm too) is made the user's alone when opened, and keeps its runs; one
// another user owns is left as it is, and Exposed says so for the caller
// to warn.
func TestOldFileMadePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ordo.db")
	old, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	ctx := context.Background()
	if err := old.Save(ctx, storetest.SimpleRun("r1", "u", contracts.RunRunning, 1, storetest.Base)); err != nil {
		t.Fatal(err)
	}
	files := []string{path, path + "-wal", path + "-shm"}
	for _, f := range files {
		if err := os.Chmod(f, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Exposed() != nil {
		t.Errorf("exposed: %v", s.Exposed())
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want -rw-------", filepath.Base(f), st.Mode().Perm(), err)
		}
	}
	if _, err := s.Load(ctx, "r1"); err != nil {
		t.Fatal(err)
	}

	t.Run("another user's", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("only root can give a file away")
		}
		theirs := filepath.Join(t.TempDir(), "ordo.db")
		if err := os.WriteFile(theirs, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		s, err := embedded.Open(theirs)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if st, _ := os.Stat(theirs); st.Mode().Perm() != 0o644 || s.Exposed() == nil ||
			!strings.Contains(s.Exposed().Error(), "owned by another user") {
			t.Fatalf("another user's store: %v, exposed %v", st.Mode().Perm(), s.Exposed())
		}
	})
}
