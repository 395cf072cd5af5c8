package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// TestListReadsALargeDirectoryInPart: a listing cut at max_entries reads
// the directory only until it has more than that many entries, so its work
// does not grow with the directory (10 entries of 300,000 took 1 s and
// 120 MB when the directory was read and sorted whole first). Its entries
// are sorted and the listing says it is truncated; a listing that fits is
// the whole directory, sorted, as before. A search of names alone reads
// as little.
func TestListReadsALargeDirectoryInPart(t *testing.T) {
	e := setup(t)
	dir := filepath.Join(e.cfg.Root, "big")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 10000
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := e.Call("files.list", map[string]any{"path": "big", "max_entries": 10}, "")
	runtime.ReadMemStats(&after)
	names := strings.Fields(paths(got["files"]))
	if len(names) != 10 || got["truncated"] != true || !slices.IsSorted(names) {
		t.Fatalf("list 10 of %d = %v", n, got)
	}
	// Reading all 10,000 entries (an lstat and a FileInfo each) allocated
	// 3.7 MB; two chunks of 1,024 0.5 MB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3<<19 {
		t.Fatalf("listing 10 entries allocated %d bytes: the directory of %d was read whole", alloc, n)
	}
	runtime.GC()
	runtime.ReadMemStats(&before)
	found := e.Call("files.search", map[string]any{"path": "big", "query": "f0", "in": "names", "max_results": 10}, "")
	runtime.ReadMemStats(&after)
	if got := matchList(found["matches"]); found["truncated"] != true || strings.Count(got, ":0:f0") != 10 {
		t.Fatalf("search of 10 names = %s", got)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3<<19 {
		t.Fatalf("searching 10 names allocated %d bytes: the directory of %d was read whole", alloc, n)
	}
	all := e.Call("files.list", map[string]any{"path": "big", "max_entries": 1000, "pattern": "f09*"}, "")
	if names := strings.Fields(paths(all["files"])); len(names) != 1000 || all["truncated"] != false || !slices.IsSorted(names) {
		t.Fatalf("list f09* = %d names, truncated %v", len(names), all["truncated"])
	}
}

// cancelAfter is a context whose Err reports it cancelled from its n+1th
// call on: it ends a call at a chosen check, without a clock.
type cancelAfter struct {
	context.Context
	n atomic.Int64
}

func newCancelAfter(n int64) *cancelAfter {
	c := &cancelAfter{Context: context.Background()}
	c.n.Store(n)
	return c
}

func (c *cancelAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestSearchStopsInsideAFile: a search cancelled (or timed out) while it
// scans one file stops there, between lines and inside a long line: one
// match of (\w+\s*){1000} over a 4 MiB line takes minutes, and the scan
// went on after the host had given up on the call.
func TestSearchStopsInsideAFile(t *testing.T) {
	e := setup(t)
	tools, err := Tools(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(t sdk.Tool) bool { return t.Contract.Tool == "files.search" })
	search := func(ctx context.Context, in string) error {
		_, err := tools[i].Handler(ctx, sdk.Call{Tool: "files.search", Payload: map[string]any{"query": "needle", "in": in, "path": "scan"}})
		return err
	}
	for name, content := range map[string]string{
		"lines":     strings.Repeat("hay\n", 100000) + "needle\n",
		"long line": strings.Repeat("hay ", 1<<19) + "needle\n",
	} {
		dir := filepath.Join(e.cfg.Root, "scan")
		os.RemoveAll(dir)
		os.Mkdir(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		// The checks the walk itself makes (a names-only search scans no
		// file) pass, and the first line's check: the scan is cut after.
		walk := newCancelAfter(1 << 40)
		if err := search(walk, "names"); err != nil {
			t.Fatal(err)
		}
		ctx := newCancelAfter(1<<40 - walk.n.Load() + 1)
		if err := search(ctx, "contents"); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: search cancelled in its scan = %v, want context.Canceled", name, err)
		}
	}
}

// TestHardLinkedFileRefused: a name in the root for a file that has other
// hard links (made by whoever owns both) is not read, searched or appended
// to, since another name may be outside the root; files.read of one read
// ~/outside.txt. Overwrite (a rename) and delete change only the name in
// the root. With AllowHardLinks the link reads as any file.
func TestHardLinkedFileRefused(t *testing.T) {
	e := setup(t)
	outside := filepath.Join(filepath.Dir(e.cfg.Root), "outside.txt")
	if err := os.Link(outside, filepath.Join(e.cfg.Root, "linked.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	e.Refused("files.read", map[string]any{"path": "linked.txt"}, "", "path")
	e.Refused("files.write", map[string]any{"path": "linked.txt", "content": "more", "mode": "append"}, "", "path")
	if found := e.Call("files.search", map[string]any{"query": "secret"}, ""); len(found["matches"].([]any)) != 0 {
		t.Fatalf("search read the linked file: %v", found)
	}
	if got, _ := os.ReadFile(outside); string(got) != "secret" {
		t.Fatalf("the outside file holds %q", got)
	}
	allowed := e.cfg
	allowed.AllowHardLinks = true
	if got := restart(t, allowed).Call("files.read", map[string]any{"path": "linked.txt"}, ""); got["content"] != "secret" {
		t.Fatalf("read with hard links allowed = %v", got)
	}
	e.Call("files.write", map[string]any{"path": "linked.txt", "content": "new"}, "")
	if got, _ := os.ReadFile(outside); string(got) != "secret" || e.file(t, "linked.txt") != "new" {
		t.Fatalf("overwrite: outside %q, in the root %q", got, e.file(t, "linked.txt"))
	}
}

// TestMaxBytes: a write that would grow the files under the root past
// MaxBytes is refused (field content, details limit) and changes nothing;
// one that shrinks them, or stays within, goes through. files.write could
// fill the disk.
func TestMaxBytes(t *testing.T) {
	e := setup(t)
	e.cfg.MaxBytes = 1000
	e = restart(t, e.cfg)
	e.Call("files.write", map[string]any{"path": "a/one.txt", "content": strings.Repeat("a", 600)}, "")
	for _, payload := range []map[string]any{
		{"path": "b.txt", "content": strings.Repeat("b", 401)},
		{"path": "a/one.txt", "content": strings.Repeat("c", 401), "mode": "append"},
		{"path": "a/one.txt", "content": strings.Repeat("c", 1001)},
	} {
		err := e.Refused("files.write", payload, "k-"+payload["path"].(string), "content")
		if fmt.Sprint(err.Details["limit"]) != "1000" {
			t.Errorf("refusal details %v, want limit 1000", err.Details)
		}
	}
	if got := readDir(t, e.cfg.Root) + " " + readDir(t, filepath.Join(e.cfg.Root, "a")); got != "a,etc,outside-link one.txt" || e.file(t, "a/one.txt") != strings.Repeat("a", 600) {
		t.Fatalf("refused writes changed the root: %s", got)
	}
	e.Call("files.write", map[string]any{"path": "a/one.txt", "content": strings.Repeat("d", 900)}, "")
	e.Call("files.write", map[string]any{"path": "b.txt", "content": strings.Repeat("e", 100)}, "")
	e.Call("files.write", map[string]any{"path": "a/one.txt", "content": "short"}, "")
}

// TestSearchQueryBounded: a query is at most 1,000 characters (a schema
// violation past it): a 3 MiB query compiled to 700 MB of regular
// expression program.
func TestSearchQueryBounded(t *testing.T) {
	e := setup(t)
	if err := e.Err("files.search", map[string]any{"query": strings.Repeat("<", 1001)}, ""); err.Code != contracts.CodeSchemaViolation {
		t.Fatalf("a 1,001-character query: %v, want a schema violation", err)
	}
	e.Call("files.search", map[string]any{"query": strings.Repeat("<", 1000)}, "")
}

// TestSearchLongLines: lines of 64 KiB and more, matched through a reader
// that watches the context, or as a substring for a case-sensitive
// literal, find what a short line would.
func TestSearchLongLines(t *testing.T) {
	e := setup(t)
	long := strings.Repeat("hay ", 32<<10)
	e.Call("files.write", map[string]any{"path": "long.txt", "content": long + "Needle\n" + long + "\nNeedle\n"}, "")
	for _, q := range []map[string]any{
		{"query": "needle"},
		{"query": "Needle", "case_sensitive": true},
		{"query": `Ne+dle$`, "regexp": true, "case_sensitive": true},
	} {
		q["in"] = "contents"
		got := e.Call("files.search", q, "")
		if s := matchList(got["matches"]); !strings.HasPrefix(s, "long.txt:1:hay") || !strings.HasSuffix(s, "long.txt:3:Needle") {
			t.Errorf("search %v = %.80s", q, s)
		}
	}
}

// TestMaxBytesSkipsUnreadable: a directory in the root the plugin may not
// read (another user's, in a home directory) counts as empty when the root
// is measured, instead of failing every write that grows the root.
func TestMaxBytesSkipsUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	e := setup(t)
	e.cfg.MaxBytes = 1000
	e = restart(t, e.cfg)
	locked := filepath.Join(e.cfg.Root, "locked")
	if err := os.Mkdir(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(locked, 0o755)
	e.Call("files.write", map[string]any{"path": "a.txt", "content": "fits"}, "")
}

// TestDeleteStopsWhenCancelled: a recursive delete of a tree checks its
// call's context before each removal, so a cancelled (or timed-out) delete
// stops part way, saying how far it got, instead of running on after the
// host gave up; its intent stays journaled, and the call re-issued with
// the same key removes the rest and answers as a whole delete.
func TestDeleteStopsWhenCancelled(t *testing.T) {
	e := setup(t)
	for d := range 3 {
		for f := range 10 {
			name := filepath.Join(e.cfg.Root, "tree", fmt.Sprint("d", d), fmt.Sprint("f", f))
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tools, err := Tools(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(t sdk.Tool) bool { return t.Contract.Tool == "files.delete" })
	call := sdk.Call{Tool: "files.delete", Payload: map[string]any{"path": "tree", "recursive": true}, IdempotencyKey: "k"}
	_, err = tools[i].Handler(newCancelAfter(12), call)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped after removing") {
		t.Fatalf("delete cancelled after 12 checks = %v, want context.Canceled saying how far it got", err)
	}
	left := 0
	filepath.WalkDir(filepath.Join(e.cfg.Root, "tree"), func(string, fs.DirEntry, error) error { left++; return nil })
	if left == 0 || left >= 33 {
		t.Fatalf("%d of 33 entries left under tree after the cancel: it did not stop part way", left)
	}
	out, err := tools[i].Handler(context.Background(), call)
	if got := fmt.Sprint(out); err != nil || got != "map[deleted:true kind:dir path:tree]" {
		t.Fatalf("re-issued delete = %s, %v", got, err)
	}
	if _, err := os.Lstat(filepath.Join(e.cfg.Root, "tree")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("tree after the re-issued delete: %v", err)
	}
}

// swapAt is a context whose Err runs swap at its at-th call: the moment a
// recursive delete checks in before a removal.
type swapAt struct {
	context.Context
	n, at int
	swap  func()
}

func (s *swapAt) Err() error {
	if s.n++; s.n == s.at {
		s.swap()
	}
	return nil
}

// TestDeleteTreeHoldsItsDirectories: a directory swapped for a symlink
// to elsewhere in the root while a recursive delete is inside it does not
// lead the removal there: the children are removed through the directory
// the delete opened, not by path.
func TestDeleteTreeHoldsItsDirectories(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"t/a/x", "keep/x"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	ctx := &swapAt{Context: context.Background(), at: 3, swap: func() { // before t/a/x is removed
		if err := os.Rename(filepath.Join(root, "t", "a"), filepath.Join(root, "moved")); err != nil {
			t.Error(err)
		}
		if err := os.Symlink("../keep", filepath.Join(root, "t", "a")); err != nil {
			t.Error(err)
		}
	}}
	removeTree(ctx, fsys, "t")
	if _, err := os.Stat(filepath.Join(root, "keep", "x")); err != nil {
		t.Fatalf("keep/x, outside the tree deleted: %v", err)
	}
}
