package notes_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/host/hosttest"
)

// TestThroughHost runs the real ordo-plugin-notes binary under the host,
// seed 004 scenario 1 style: create a page, read it back by URL; the same
// idempotency key after a restart returns the same page.
func TestThroughHost(t *testing.T) {
	p := hosttest.Start(t, hosttest.Build(t, "notes"), "notes", t.TempDir(), nil)
	page := p.Call("notes.create_page", map[string]any{"title": "Meeting notes", "content": "Agenda"}, "run-1/a1")
	p.Call("notes.append_block", map[string]any{"page_id": page["url"], "text": "Decision"}, "run-1/a2")
	got := p.Call("notes.get_page", map[string]any{"page_id": page["url"]}, "")
	if got["content"] != "Agenda\n\nDecision" {
		t.Fatalf("get_page = %v", got)
	}
	p.Refused("notes.get_page", map[string]any{"page_id": "page_missing"}, "", "page_id")
	// An error quoting a 5 MiB page id (20 MiB as %q writes it) passed what
	// the host takes from a plugin: it is cut and arrives as a refusal.
	p.Refused("notes.get_page", map[string]any{"page_id": strings.Repeat("\x01", 5<<20)}, "", "page_id")

	p = p.Restart()
	again := p.Call("notes.create_page", map[string]any{"title": "Meeting notes", "content": "Agenda"}, "run-1/a1")
	if again["id"] != page["id"] {
		t.Fatalf("after restart the key made a new page: %v vs %v", again, page)
	}
	if q := p.Call("notes.query_pages", map[string]any{}, ""); len(q["records"].([]any)) != 1 {
		t.Fatalf("query_pages = %v", q)
	}
	if filepath.Base(p.DataDir) != "notes" {
		t.Fatalf("data dir %s", p.DataDir)
	}
}
