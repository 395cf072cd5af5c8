package notes

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ordo-run/ordo/plugins/internal/plugintest"
)

// Issue 13 item 3: two plugin processes (two Ordo servers) share the data
// directory. Each store below has its own lock file descriptor, as two
// processes would. A page one creates is readable through the other at
// once, a block appended through one is not lost when the other commits,
// and an idempotency key used through one is honoured by the other.
func TestTwoProcessesShareTheStore(t *testing.T) {
	dir := t.TempDir()
	a, b := open(t, dir), open(t, dir)
	page := a.Call("notes.create_page", map[string]any{"title": "Shared"}, "run-1/a1")
	b.Call("notes.append_block", map[string]any{"page_id": page["url"], "text": "from b"}, "run-1/a2")
	a.Call("notes.create_page", map[string]any{"title": "Second"}, "run-1/a3")
	if got := a.Call("notes.get_page", map[string]any{"page_id": page["id"]}, ""); got["content"] != "from b" {
		t.Fatalf("through a, the page b appended to is %v", got)
	}
	// The server that takes over a run re-issues the other's keys.
	if again := b.Call("notes.create_page", map[string]any{"title": "Shared"}, "run-1/a1"); again["id"] != page["id"] {
		t.Fatalf("b re-issued a's key and got %v, a made %v", again, page)
	}
	if q := open(t, dir).Call("notes.query_pages", map[string]any{}, ""); titles(q["records"]) != "Shared|Second" {
		t.Fatalf("store holds %s", titles(q["records"]))
	}
}

// Both processes create pages at once, each key used through both: every
// page is kept, each key made one page.
func TestTwoProcessesWriteAtOnce(t *testing.T) {
	dir := t.TempDir()
	procs := []*plugintest.Tools{open(t, dir), open(t, dir)}
	const pages = 15
	var wg sync.WaitGroup
	ids := make([][pages]any, len(procs))
	for i, p := range procs {
		wg.Go(func() {
			for n := range pages {
				ids[i][n] = p.Call("notes.create_page", map[string]any{"title": fmt.Sprint("page ", n)}, fmt.Sprint("k", n))["id"]
			}
		})
	}
	wg.Wait()
	if ids[0] != ids[1] {
		t.Fatalf("the same keys made different pages: %v vs %v", ids[0], ids[1])
	}
	if n := pageCount(t, dir); n != pages {
		t.Fatalf("%d pages, want %d", n, pages)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, ".*tmp")); len(matches) != 0 {
		t.Fatalf("temporary files left: %v", matches)
	}
}
