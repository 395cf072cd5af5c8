package notes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/plugintest"
)

func open(t *testing.T, dir string) *plugintest.Tools {
	t.Helper()
	tools, err := Tools(Config{DataDir: dir})
	return plugintest.Server(t, tools, err)
}

func pageCount(t *testing.T, dir string) int {
	t.Helper()
	s, err := openStore(filepath.Join(dir, storeName), 0)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := s.snap()
	if err != nil {
		t.Fatal(err)
	}
	return len(cur.Pages)
}

// Seed 004 scenario 1: create a meeting-notes page, hand its URL on.
func TestCreateGetAppend(t *testing.T) {
	dir := t.TempDir()
	n := open(t, dir)
	created := n.Call("notes.create_page", map[string]any{"title": "Meeting notes", "content": "Agenda: launch"}, "")
	id, url := created["id"].(string), created["url"].(string)
	if !strings.HasPrefix(id, "page_") || url != URLPrefix+id {
		t.Fatalf("create_page = %v", created)
	}
	appended := n.Call("notes.append_block", map[string]any{"page_id": url, "text": "Decision: ship", "type": "to_do"}, "")
	if appended["page_id"] != id || appended["block_count"] != json.Number("2") {
		t.Fatalf("append_block = %v", appended)
	}
	got := n.Call("notes.get_page", map[string]any{"page_id": id}, "")
	if got["title"] != "Meeting notes" || got["content"] != "Agenda: launch\n\nDecision: ship" {
		t.Fatalf("get_page = %v", got)
	}
	blocks := got["blocks"].([]any)
	if len(blocks) != 2 || blocks[1].(map[string]any)["type"] != "to_do" {
		t.Fatalf("blocks = %v", blocks)
	}
	n.Refused("notes.get_page", map[string]any{"page_id": "page_nope"}, "", "page_id")
	n.Refused("notes.append_block", map[string]any{"page_id": "ordo://notes/page_nope", "text": "x"}, "", "page_id")
	n.Refused("notes.create_page", map[string]any{"title": "child", "parent": "page_nope"}, "", "parent")
	if e := n.Err("notes.create_page", map[string]any{"title": ""}, ""); e.Code != contracts.CodeSchemaViolation {
		t.Fatalf("empty title: %v, want a schema violation", e)
	}
	if pageCount(t, dir) != 1 {
		t.Fatal("a refused call changed the store")
	}
}

func TestQueryPages(t *testing.T) {
	n := open(t, t.TempDir())
	root := n.Call("notes.create_page", map[string]any{"title": "Projects"}, "")
	for _, title := range []string{"Launch plan", "Budget", "launch retro"} {
		n.Call("notes.create_page", map[string]any{"title": title, "parent": root["url"]}, "")
	}
	n.Call("notes.create_page", map[string]any{"title": "Launch party"}, "")
	q := n.Call("notes.query_pages", map[string]any{"title_contains": "LAUNCH", "parent": root["id"]}, "")
	if got := titles(q["records"]); got != "Launch plan|launch retro" || q["count"] != json.Number("2") {
		t.Fatalf("query launch under Projects = %s (%v)", got, q)
	}
	q = n.Call("notes.query_pages", map[string]any{"limit": 2}, "")
	if got := titles(q["records"]); got != "Projects|Launch plan" || q["truncated"] != true {
		t.Fatalf("query limit 2 = %s (%v)", got, q)
	}
	q = n.Call("notes.query_pages", map[string]any{"title_contains": "nothing like this"}, "")
	if len(q["records"].([]any)) != 0 {
		t.Fatalf("query = %v", q)
	}
	n.Refused("notes.query_pages", map[string]any{"parent": "page_nope"}, "", "parent")
}

func TestIdempotentCreateAndAppendSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	n := open(t, dir)
	args := map[string]any{"title": "Run report"}
	first := n.Call("notes.create_page", args, "run-1/a1")
	second := n.Call("notes.create_page", args, "run-1/a1")
	if first["id"] != second["id"] || pageCount(t, dir) != 1 {
		t.Fatalf("same key made two pages: %v %v", first, second)
	}
	block := map[string]any{"page_id": first["id"], "text": "step done"}
	b1 := n.Call("notes.append_block", block, "run-1/a2")

	n = open(t, dir) // the plugin restarts
	if again := n.Call("notes.create_page", args, "run-1/a1"); again["id"] != first["id"] || pageCount(t, dir) != 1 {
		t.Fatalf("after restart: %v, %d pages", again, pageCount(t, dir))
	}
	if b2 := n.Call("notes.append_block", block, "run-1/a2"); b2["block_id"] != b1["block_id"] {
		t.Fatalf("replayed append_block = %v, want %v", b2, b1)
	}
	if got := n.Call("notes.get_page", map[string]any{"page_id": first["id"]}, ""); len(got["blocks"].([]any)) != 1 {
		t.Fatalf("block appended twice: %v", got)
	}
	n.Call("notes.create_page", args, "run-2/a1")
	if pageCount(t, dir) != 2 {
		t.Fatal("a new key did not create a page")
	}
	n.Refused("notes.create_page", map[string]any{"title": "Other"}, "run-1/a1", "idempotency_key")
}

func TestStoreFileIsRefusedWhenCorruptAndIgnoresTempFiles(t *testing.T) {
	dir := t.TempDir()
	n := open(t, dir)
	n.Call("notes.create_page", map[string]any{"title": "kept"}, "")
	// A crash mid-write leaves a temp file beside the store; the store is intact.
	os.WriteFile(filepath.Join(dir, "."+storeName+".tmp-deadbeef"), []byte(`{"version":1,"pa`), 0o600)
	n = open(t, dir)
	if q := n.Call("notes.query_pages", map[string]any{}, ""); len(q["records"].([]any)) != 1 {
		t.Fatalf("after a torn temp file: %v", q)
	}
	path := filepath.Join(dir, storeName)
	os.WriteFile(path, []byte(`{"version":1,"pages":`), 0o600)
	if _, err := Tools(Config{DataDir: dir}); err == nil {
		t.Fatal("a corrupt store was accepted")
	}
	if data, _ := os.ReadFile(path); string(data) != `{"version":1,"pages":` {
		t.Fatal("a corrupt store was overwritten")
	}
	os.WriteFile(path, []byte(`{"version":99,"pages":{}}`), 0o600)
	if _, err := Tools(Config{DataDir: dir}); err == nil {
		t.Fatal("a store of an unknown version was accepted")
	}
}

func titles(v any) string {
	var out []string
	for _, r := range v.([]any) {
		out = append(out, r.(map[string]any)["title"].(string))
	}
	return strings.Join(out, "|")
}

// TestPageStaysReadable: appends that would make a page too large for
// notes.get_page to send back are refused and change nothing. Unbounded, a
// few 1 MB appends made a page whose get_page answer the host refuses for
// good ("received message larger than max").
func TestPageStaysReadable(t *testing.T) {
	s := open(t, t.TempDir())
	id := s.Call("notes.create_page", map[string]any{"title": "log"}, "")["id"]
	chunk := strings.Repeat("x", 1<<20)
	blocks := 0
	for range 20 {
		if _, err := s.Try("notes.append_block", map[string]any{"page_id": id, "text": chunk}, ""); err != nil {
			if e := contracts.AsError(err); e.Retryable || e.Details["field"] != "text" {
				t.Fatalf("append refused with %v (details %v), want a refusal naming text", e, e.Details)
			}
			break
		}
		blocks++
	}
	if blocks == 0 || blocks == 20 {
		t.Fatalf("%d of 20 appends of 1 MB accepted", blocks)
	}
	page := s.Call("notes.get_page", map[string]any{"page_id": id}, "")
	if n := len(page["blocks"].([]any)); n != blocks {
		t.Fatalf("page has %d blocks after %d accepted appends", n, blocks)
	}
	if data, _ := json.Marshal(page); len(data) > contracts.MaxMessageBytes {
		t.Fatalf("get_page answer is %d bytes, over the %d a plugin may send", len(data), contracts.MaxMessageBytes)
	}
	// "<" takes 6 bytes in JSON: 1 MB of it is 12 MB as content and block.
	s.Refused("notes.create_page", map[string]any{"title": "big", "content": strings.Repeat("<", 1<<20)}, "", "content")
}

// TestStoreMaxBytes: a change that would make notes.json larger than
// MaxBytes is refused (field content or text, details limit), keyed or not,
// and changes nothing, not even the key's record: pages accumulated
// without bound, each change rewriting the whole file.
func TestStoreMaxBytes(t *testing.T) {
	dir := t.TempDir()
	tools, err := Tools(Config{DataDir: dir, MaxBytes: 4000})
	s := plugintest.Server(t, tools, err)
	id := s.Call("notes.create_page", map[string]any{"title": "log", "content": strings.Repeat("a", 1000)}, "")["id"]
	before, err := os.ReadFile(filepath.Join(dir, storeName))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "k1"} {
		if e := s.Refused("notes.append_block", map[string]any{"page_id": id, "text": strings.Repeat("b", 3000)}, key, "text"); e.Details["limit"] != int64(4000) {
			t.Errorf("refusal details %v, want limit 4000", e.Details)
		}
		s.Refused("notes.create_page", map[string]any{"title": "more", "content": strings.Repeat("c", 3000)}, key, "content")
	}
	if after, _ := os.ReadFile(filepath.Join(dir, storeName)); string(after) != string(before) {
		t.Fatalf("refused changes rewrote the store:\n%s\nwas\n%s", after, before)
	}
	s.Call("notes.append_block", map[string]any{"page_id": id, "text": "small"}, "k1")
}

// TestQueryNeedleLoweredOnce: query_pages lower-cases title_contains once,
// not once per page.
func TestQueryNeedleLoweredOnce(t *testing.T) {
	dir := t.TempDir()
	seedStore(t, dir, 5000)
	s := open(t, dir)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := s.Call("notes.query_pages", map[string]any{"title_contains": strings.Repeat("X", 2000)}, "")
	runtime.ReadMemStats(&after)
	if got["count"] != json.Number("0") {
		t.Fatalf("query = %v", got)
	}
	// Once per page it was 5,000 copies of 2,000 bytes: 10 MB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Fatalf("query_pages allocated %d bytes: title_contains was lower-cased for every page", alloc)
	}
}
