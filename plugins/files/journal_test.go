package files

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ordo-run/ordo/plugins/internal/jsonl"
	"github.com/ordo-run/ordo/plugins/internal/plugintest"
)

// An append the kill tore (part of the data written) is finished by the
// re-issued call; a file changed otherwise since is refused, since no one
// can tell whether the append happened.
func TestResumedAppend(t *testing.T) {
	payload := map[string]any{"path": "log.txt", "content": "line\n", "mode": "append"}
	for _, c := range []struct {
		name, before, after string
		refused             bool
	}{
		{"untouched", "old\n", "old\nline\n", false},
		{"torn", "old\nli", "old\nline\n", false},
		{"whole", "old\nline\n", "old\nline\n", false},
		{"whole, more after", "old\nline\nmore\n", "old\nline\nmore\n", false},
		{"changed", "old\nLI", "old\nLI", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t)
			os.WriteFile(filepath.Join(e.cfg.Root, "log.txt"), []byte(c.before), 0o644)
			journalIntent(t, e.cfg, "files.write", "k", payload, &change{Op: "append", Path: "log.txt", Name: "log.txt", Offset: 4, Perm: 0o644})
			e = restart(t, e.cfg)
			if c.refused {
				e.Refused("files.write", payload, "k", "path")
			} else if out := e.Call("files.write", payload, "k"); out["created"] != false || out["bytes_written"] != json.Number("5") {
				t.Fatalf("result %v", out)
			}
			if got := e.file(t, "log.txt"); got != c.after {
				t.Fatalf("log.txt = %q, want %q", got, c.after)
			}
		})
	}
}

// journalIntent appends the intent a call cut off after its first journal
// line leaves.
func journalIntent(t *testing.T, cfg Config, tool, key string, payload map[string]any, c *change) {
	t.Helper()
	canon, _ := json.Marshal(payload)
	sum := sha256.Sum256(canon)
	e := entry{Key: tool + "/" + key, PayloadHash: hex.EncodeToString(sum[:]), Intent: c}
	if err := jsonl.Append(filepath.Join(cfg.DataDir, journalName), e); err != nil {
		t.Fatal(err)
	}
}

// Issue 13 item 3: two plugin processes share the data directory and the
// root (each Tools has its own lock file descriptor, as two processes
// would): a key used through one is honoured by the other, and appends
// through both at once are each made once.
func TestTwoProcessesShareJournalAndRoot(t *testing.T) {
	a := setup(t)
	b := restart(t, a.cfg)
	args := map[string]any{"path": "log.txt", "content": "first\n", "mode": "append"}
	first := a.Call("files.write", args, "run-1/a1")
	if again := b.Call("files.write", args, "run-1/a1"); again["created"] != first["created"] || a.file(t, "log.txt") != "first\n" {
		t.Fatalf("b re-issued a's key: %v; log.txt %q", again, a.file(t, "log.txt"))
	}
	const appends = 15
	var wg sync.WaitGroup
	for i, p := range []*plugintest.Tools{a.Tools, b.Tools} {
		wg.Go(func() {
			for n := range appends {
				line := fmt.Sprintf("%d-%d\n", i, n)
				p.Call("files.write", map[string]any{"path": "log.txt", "content": line, "mode": "append"}, line)
			}
		})
	}
	wg.Wait()
	lines := strings.Split(a.file(t, "log.txt"), "\n")
	slices.Sort(lines)
	if len(lines) != 2+2*appends || len(slices.Compact(lines)) != len(lines) {
		t.Fatalf("log.txt holds %q", lines)
	}
}

// A key whose cut-off call left an intent is refused for another payload
// (field idempotency_key), the tree untouched: finishing the first call's
// change, or making the second's, would both answer the wrong call.
func TestIntentKeyReusedWithOtherPayload(t *testing.T) {
	e := setup(t)
	first := map[string]any{"path": "a.txt", "content": "one", "mode": "create_new"}
	journalIntent(t, e.cfg, "files.write", "k", first, &change{Op: "create_new", Path: "a.txt", Name: "a.txt", Created: true, Perm: 0o644})
	e = restart(t, e.cfg)
	e.Refused("files.write", map[string]any{"path": "b.txt", "content": "two", "mode": "create_new"}, "k", "idempotency_key")
	if got := readDir(t, e.cfg.Root); got != "etc,outside-link" {
		t.Fatalf("root holds %s", got)
	}
	if out := e.Call("files.write", first, "k"); out["created"] != true || e.file(t, "a.txt") != "one" {
		t.Fatalf("the first call re-issued: %v", out)
	}
}

func readDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

// Other runs append to the same file after a cut-off append and before
// its re-issue (a shared log): the size the file had when the next append
// was planned says whether the cut-off one happened, though its data is no
// longer at the end.
func TestResumedAppendAfterOthers(t *testing.T) {
	payload := map[string]any{"path": "log.txt", "content": "line\n", "mode": "append"}
	for _, c := range []struct{ name, before, after string }{
		{"had not happened", "old\n", "old\nother\nline\n"},
		{"had happened", "old\nline\n", "old\nline\nother\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t)
			os.WriteFile(filepath.Join(e.cfg.Root, "log.txt"), []byte(c.before), 0o644)
			journalIntent(t, e.cfg, "files.write", "k", payload, &change{Op: "append", Path: "log.txt", Name: "log.txt", Offset: 4, Perm: 0o644})
			e = restart(t, e.cfg)
			e.Call("files.write", map[string]any{"path": "log.txt", "content": "other\n", "mode": "append"}, "k2")
			e.Call("files.write", payload, "k")
			if got := e.file(t, "log.txt"); got != c.after {
				t.Fatalf("log.txt = %q, want %q", got, c.after)
			}
		})
	}
}

// TestJournalBounded: the journal, which grew by a line or two per keyed
// write or delete for ever (outside bundled.files.max_bytes), is compacted
// past its bound. What a re-issue needs survives every compaction and is
// read by every process sharing it: a recent key is still answered from
// the journal (through this process, another started before the
// compactions, and a restarted one), and an append cut off before them
// all is finished from its intent, by the size its file had when the next
// append was planned (a line compaction dropped).
func TestJournalBounded(t *testing.T) {
	e := setup(t)
	e.cfg.journalMax = 8 << 10
	e = restart(t, e.cfg)
	other := restart(t, e.cfg)
	os.WriteFile(filepath.Join(e.cfg.Root, "log.txt"), []byte("old\n"), 0o644)
	cut := map[string]any{"path": "log.txt", "content": "cut\n", "mode": "append"}
	journalIntent(t, e.cfg, "files.write", "cut", cut, &change{Op: "append", Path: "log.txt", Name: "log.txt", Offset: 4, Perm: 0o644})
	journal := filepath.Join(e.cfg.DataDir, journalName)
	var want strings.Builder
	want.WriteString("old\n")
	for i := range 300 {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		e.Call("files.write", map[string]any{"path": "log.txt", "content": line, "mode": "append"}, fmt.Sprint("run/a", i))
		if info, err := os.Stat(journal); err != nil || info.Size() > e.cfg.journalMax {
			t.Fatalf("after %d appends the journal is %v bytes (bound %d): %v", i+1, info.Size(), e.cfg.journalMax, err)
		}
	}
	for _, p := range []env{e, other, restart(t, e.cfg)} {
		for i := 290; i < 300; i++ {
			p.Call("files.write", map[string]any{"path": "log.txt", "content": fmt.Sprintf("line %d\n", i), "mode": "append"}, fmt.Sprint("run/a", i))
		}
	}
	if got := e.file(t, "log.txt"); got != want.String() {
		t.Fatalf("log.txt after re-issuing recent keys:\n%s\nwant\n%s", got, want.String())
	}
	other.Call("files.write", cut, "cut")
	if got := e.file(t, "log.txt"); got != want.String()+"cut\n" {
		t.Fatalf("log.txt after re-issuing the cut-off append ends %q", got[max(0, len(got)-40):])
	}
}
