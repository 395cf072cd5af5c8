//go:build linux

package patterns_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/fulldisk"
	"github.com/ordo-run/ordo/memory/patterns"
)

// TestTemplateSurvivesAFullDisk: saving a template again on a full disk is
// refused with CodeStore and the template stays as it was, in the process
// and on disk. chromem-go truncates a record's file before writing it, so
// the refused write left the file cut off, and the next start set it
// aside: the template a person saved was gone. The same write updates a
// template each time a run planned from it finishes.
func TestTemplateSurvivesAFullDisk(t *testing.T) {
	dir := filepath.Join(fulldisk.Mount(t, 512), "patterns")
	m := open(t, dir, patterns.Options{})
	plan := func(summary string) contracts.Plan {
		return contracts.Plan{Version: "1.0", Goal: report, Actions: []contracts.Action{{ID: "a1", Tool: "chat.post", Summary: summary}}}
	}
	if err := m.SaveTemplate(t.Context(), "ann", "weekly", plan("short")); err != nil {
		t.Fatal(err)
	}
	fill := filepath.Join(filepath.Dir(dir), "fill")
	fulldisk.Fill(t, fill)
	err := m.SaveTemplate(t.Context(), "ann", "weekly", plan(strings.Repeat("long ", 6000)))
	if contracts.CodeOf(err) != contracts.CodeStore {
		t.Fatalf("saving on a full disk: %v", err)
	}
	// want checks ann's template is the one saved first.
	want := func(m *patterns.Memory, when string) {
		t.Helper()
		tpl, err := m.Template(t.Context(), "ann", "weekly")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if got := tpl.Plan.Actions[0].Summary; got != "short" {
			t.Fatalf("%s: the template holds the refused save (%d bytes of summary)", when, len(got))
		}
	}
	want(m, "in the process")
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	want(open(t, dir, patterns.Options{}), "reopened")
}

// TestFullDiskBeforeTheManifest: the disk fills just as a new store
// writes its first record (one page free: the record fits, the manifest
// beside it does not). The save is refused and, once space is freed, the
// store opens and works. Before, the record stayed without a manifest and
// every later start failed ("has records but no usable manifest", 9002):
// no `ordo run` until the directory was deleted by hand.
func TestFullDiskBeforeTheManifest(t *testing.T) {
	mnt := fulldisk.Mount(t, 512)
	dir := filepath.Join(mnt, "patterns")
	m := open(t, dir, patterns.Options{}) // its collections, no record, no manifest yet
	fill := filepath.Join(mnt, "fill")
	fulldisk.Fill(t, fill)
	st, err := os.Stat(fill)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(fill, st.Size()-4096); err != nil {
		t.Fatal(err)
	}
	plan := contracts.Plan{Version: "1.0", Goal: report, Actions: []contracts.Action{{ID: "a1", Tool: "chat.post"}}}
	if err := m.SaveTemplate(t.Context(), "ann", "weekly", plan); contracts.CodeOf(err) != contracts.CodeStore {
		t.Fatalf("saving on a full disk: %v", err)
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	m, err = patterns.Open(dir, nil, patterns.Options{})
	if err != nil {
		t.Fatalf("after a full disk: %v", err)
	}
	if err := m.SaveTemplate(t.Context(), "ann", "weekly", plan); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Template(t.Context(), "ann", "weekly"); err != nil {
		t.Fatal(err)
	}
}
