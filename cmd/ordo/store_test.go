package main_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	_ "modernc.org/sqlite"
)

// TestMigrateSaysWhatItApplied: `ordo migrate` on an embedded file an
// older build left (schema version 3, before run_requests) reports the
// migration it applied, then, run again, none; the run it held is intact.
// It said "0 migration(s) applied now" while it applied them, since
// opening the store had migrated it already.
func TestMigrateSaysWhatItApplied(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.ordo("", "run", "--plan", firstRun, "--yes", "--json").wantRun(t, 0).ID
	db, err := sql.Open("sqlite", filepath.Join(e.data, "ordo.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DROP TABLE run_requests; PRAGMA user_version = 3`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r := e.ordo("", "migrate", "--json")
	r.want(t, 0)
	var got struct{ Applied []string }
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if want := []string{"embedded schema 4"}; !slices.Equal(got.Applied, want) {
		t.Fatalf("applied %q, want %q", got.Applied, want)
	}
	e.ordo("", "migrate").wantOut(t, 0, "(0 migration(s) applied now)")
	e.ordo("", "runs", "show", id).wantOut(t, 0, "completed")
}
