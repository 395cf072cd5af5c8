package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// The run store holds goals, plans, results and state: its files are the
// owner's alone even in a data directory others may read (one an operator
// made, say /srv/ordo with mode 0755), as the directories Ordo creates are.
func TestEmbeddedStoreFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "srv")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := load(t, "")
	cfg.DataDir = dir
	st, err := OpenStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &contracts.Run{ID: "run_private", UserID: "ann", Goal: "g", Status: contracts.RunRunning, Seq: 1}
	if err := st.Save(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(cfg.DatabasePath() + "*")
	if len(files) < 2 { // the database and its write-ahead log
		t.Fatalf("store files %v", files)
	}
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s: mode %v (%v), want no access for others", f, fi.Mode().Perm(), err)
		}
	}
}
