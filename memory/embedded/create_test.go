package embedded_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ordo-run/ordo/memory/embedded"
)

// TestNewFileIsWhole: a new store's schema is in its main file when Open
// returns, not in frames of a WAL still to be checkpointed: the main file
// alone, copied elsewhere, opens at the full schema. Migrating the empty
// file in place (seven syncs) left the schema in the WAL.
func TestNewFileIsWhole(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(filepath.Join(dir, "ordo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := len(s.Migrated()); n == 0 {
		t.Fatal("a new file reports no migrations applied")
	}
	data, err := os.ReadFile(filepath.Join(dir, "ordo.db"))
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(t.TempDir(), "alone.db")
	if err := os.WriteFile(alone, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", alone)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != len(s.Migrated()) {
		t.Fatalf("the main file alone is at schema %d (%v), want %d", v, err, len(s.Migrated()))
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q (%v), want wal", mode, err)
	}
}

// TestNewFileOpenedAtOnce: processes opening a new file at once (here
// stores in one process) all open it; one created it and reports every
// migration, the others none, and no temporary is left beside it.
func TestNewFileOpenedAtOnce(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ordo.db")
	stores := make([]*embedded.Store, 8)
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = embedded.Open(path) })
	}
	wg.Wait()
	var created int
	for i, s := range stores {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		defer s.Close()
		if len(s.Migrated()) > 0 {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d stores report creating the file, want 1", created)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains([]string{"ordo.db", "ordo.db-wal", "ordo.db-shm"}, e.Name()) {
			t.Errorf("left beside the store: %s", e.Name())
		}
	}
}
