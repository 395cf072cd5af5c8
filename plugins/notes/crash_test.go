package notes_test

import (
	"testing"

	"github.com/ordo-run/ordo/host/hosttest"
)

// Issue 13 item 2: the plugin is SIGKILLed inside create_page and
// append_block, with the new store durable in its temporary file and
// after the commit before the reply. The restarted plugin, given the same
// key, makes the page or block once and answers the same on every repeat.
func TestCrashInsideChangeIsExactlyOnce(t *testing.T) {
	bin := hosttest.Build(t, "notes")
	for _, stage := range []string{"tmp", "effect"} {
		t.Run("create_page/"+stage, func(t *testing.T) {
			ordo := t.TempDir()
			args := map[string]any{"title": "Report", "content": "first"}
			hosttest.Crash(t, bin, "notes", ordo, nil, "notes.create_page/"+stage, 1, "notes.create_page", args, "run-1/a1")
			p := hosttest.Start(t, bin, "notes", ordo, nil)
			first := p.Call("notes.create_page", args, "run-1/a1")
			if again := p.Call("notes.create_page", args, "run-1/a1"); again["id"] != first["id"] {
				t.Fatalf("repeat made %v, first %v", again, first)
			}
			if q := p.Call("notes.query_pages", map[string]any{}, ""); q["count"] != 1.0 {
				t.Fatalf("pages: %v", q)
			}
		})
		t.Run("append_block/"+stage, func(t *testing.T) {
			ordo := t.TempDir()
			p := hosttest.Start(t, bin, "notes", ordo, nil)
			page := p.Call("notes.create_page", map[string]any{"title": "Report", "content": "first"}, "run-1/a1")
			p.Host.Close()
			args := map[string]any{"page_id": page["url"], "text": "second"}
			hosttest.Crash(t, bin, "notes", ordo, nil, "notes.append_block/"+stage, 1, "notes.append_block", args, "run-1/a2")
			p = hosttest.Start(t, bin, "notes", ordo, nil)
			first := p.Call("notes.append_block", args, "run-1/a2")
			if again := p.Call("notes.append_block", args, "run-1/a2"); again["block_id"] != first["block_id"] || first["block_count"] != 2.0 {
				t.Fatalf("append_block answered %v then %v", first, again)
			}
			if got := p.Call("notes.get_page", map[string]any{"page_id": page["id"]}, ""); got["content"] != "first\n\nsecond" {
				t.Fatalf("page content %q", got["content"])
			}
		})
	}
}
