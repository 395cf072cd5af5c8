package files_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/host/hosttest"
)

// TestThroughHost runs the real ordo-plugin-files binary under the host:
// tools work, escapes are refused across the process boundary, and an
// idempotency key outlives a plugin restart.
func TestThroughHost(t *testing.T) {
	bin := hosttest.Build(t, "files")
	base := t.TempDir()
	root := filepath.Join(base, "root")
	os.Mkdir(root, 0o755)
	os.WriteFile(filepath.Join(base, "outside.txt"), []byte("secret"), 0o644)
	os.Symlink("/etc", filepath.Join(root, "etc"))
	env := map[string]string{"ORDO_FILES_ROOT": root}
	p := hosttest.Start(t, bin, "files", filepath.Join(base, "ordo"), env)
	p.Call("files.write", map[string]any{"path": "a/log.txt", "content": "one\n", "mode": "append"}, "run-1/a1")
	p.Call("files.write", map[string]any{"path": "a/log.txt", "content": "one\n", "mode": "append"}, "run-1/a1")
	if got := p.Call("files.read", map[string]any{"path": "a/log.txt"}, ""); got["content"] != "one\n" {
		t.Fatalf("read = %v", got)
	}
	if got := p.Call("files.search", map[string]any{"query": "ONE"}, ""); len(got["matches"].([]any)) != 1 {
		t.Fatalf("search = %v", got)
	}
	for _, path := range []string{"../outside.txt", "/etc/passwd", "etc/passwd"} {
		p.Refused("files.read", map[string]any{"path": path}, "", "path")
		p.Refused("files.write", map[string]any{"path": path, "content": "x"}, "", "path")
		p.Refused("files.delete", map[string]any{"path": path}, "", "path")
	}
	// A payload over gRPC's default 4 MiB reaches the plugin (a 5 MB write
	// failed with a size error), and so does a hard-link refusal and the
	// size limit set in the environment.
	big := strings.Repeat("x", 5<<20)
	if got := p.Call("files.write", map[string]any{"path": "big.txt", "content": big}, ""); got["bytes_written"] != float64(5<<20) {
		t.Fatalf("write of 5 MiB = %v", got)
	}
	os.Link(filepath.Join(base, "outside.txt"), filepath.Join(root, "linked.txt"))
	p.Refused("files.read", map[string]any{"path": "linked.txt"}, "", "path")
	if _, err := os.Stat(filepath.Join(p.DataDir, "files-journal.jsonl")); err != nil {
		t.Fatalf("journal not in the host-given data dir: %v", err)
	}

	p = p.Restart()
	p.Call("files.write", map[string]any{"path": "a/log.txt", "content": "one\n", "mode": "append"}, "run-1/a1")
	if data, _ := os.ReadFile(filepath.Join(root, "a", "log.txt")); string(data) != "one\n" {
		t.Fatalf("the same key appended again after a restart: %q", data)
	}
	if got := p.Call("files.delete", map[string]any{"path": "a", "recursive": true}, ""); got["kind"] != "dir" {
		t.Fatalf("delete = %v", got)
	}
	if data, _ := os.ReadFile(filepath.Join(base, "outside.txt")); string(data) != "secret" {
		t.Fatal("a file outside the root changed")
	}
}
