package files_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ordo-run/ordo/host/hosttest"
)

// crashCase is one keyed side effect: the files before it, the call, and
// the files and result it must leave however it was cut off.
type crashCase struct {
	name    string
	before  map[string]string
	tool    string
	payload map[string]any
	after   map[string]string // every file in the root afterwards
	result  map[string]any
}

var crashCases = []crashCase{
	{"create_new", nil, "files.write", map[string]any{"path": "new/a.txt", "content": "hello", "mode": "create_new"},
		map[string]string{"new/a.txt": "hello"}, map[string]any{"created": true, "bytes_written": 5.0}},
	{"append", map[string]string{"log.txt": "old\n"}, "files.write", map[string]any{"path": "log.txt", "content": "line\n", "mode": "append"},
		map[string]string{"log.txt": "old\nline\n"}, map[string]any{"created": false, "bytes_written": 5.0}},
	{"append_new", nil, "files.write", map[string]any{"path": "fresh.log", "content": "first\n", "mode": "append"},
		map[string]string{"fresh.log": "first\n"}, map[string]any{"created": true, "bytes_written": 6.0}},
	{"overwrite", map[string]string{"doc.txt": "v1"}, "files.write", map[string]any{"path": "doc.txt", "content": "v2"},
		map[string]string{"doc.txt": "v2"}, map[string]any{"created": false, "bytes_written": 2.0}},
	{"delete", map[string]string{"gone.txt": "bye", "kept.txt": "stay"}, "files.delete", map[string]any{"path": "gone.txt"},
		map[string]string{"kept.txt": "stay"}, map[string]any{"deleted": true, "kind": "file"}},
}

// Issue 13 item 2: the plugin is SIGKILLed at each instant inside each
// keyed side effect (after its intent is journaled, with the new content
// in a temporary file, after the effect and before its record, after the
// record and before the reply). The restarted plugin, given the same key,
// performs the effect exactly once and returns one result, the same on
// every repeat, and leaves no temporary file in the root.
func TestCrashInsideEffectIsExactlyOnce(t *testing.T) {
	bin := hosttest.Build(t, "files")
	for _, c := range crashCases {
		stages := []string{"intent", "tmp", "effect", "done"}
		if c.tool == "files.delete" || c.payload["mode"] == "append" {
			stages = slices.DeleteFunc(stages, func(s string) bool { return s == "tmp" })
		}
		for _, stage := range stages {
			t.Run(c.name+"/"+stage, func(t *testing.T) {
				base := t.TempDir()
				root, ordo := filepath.Join(base, "root"), filepath.Join(base, "ordo")
				writeTree(t, root, c.before)
				env := map[string]string{"ORDO_FILES_ROOT": root}
				hosttest.Crash(t, bin, "files", ordo, env, c.tool+"/"+stage, 1, c.tool, c.payload, "run-1/a1")

				p := hosttest.Start(t, bin, "files", ordo, env)
				first := p.Call(c.tool, c.payload, "run-1/a1")
				again := p.Call(c.tool, c.payload, "run-1/a1")
				for k, v := range c.result {
					if first[k] != v {
						t.Errorf("result %v, want %s = %v", first, k, v)
					}
				}
				if !equalJSON(first, again) {
					t.Errorf("repeat returned %v, first %v", again, first)
				}
				if got := readTree(t, root); !equalJSON(got, c.after) {
					t.Errorf("root holds %v, want %v", got, c.after)
				}
			})
		}
	}
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree is every regular file under root (temporary ones included).
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
