package files

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/plugintest"
)

type env struct {
	cfg Config
	*plugintest.Tools
}

func setup(t *testing.T) env {
	t.Helper()
	base := t.TempDir()
	cfg := Config{Root: filepath.Join(base, "root"), DataDir: filepath.Join(base, "data")}
	for _, d := range []string{cfg.Root, cfg.DataDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(base, "outside.txt"), []byte("secret"), 0o644)
	os.Symlink("/etc", filepath.Join(cfg.Root, "etc"))
	os.Symlink(filepath.Join(base, "outside.txt"), filepath.Join(cfg.Root, "outside-link"))
	return restart(t, cfg)
}

// restart builds the tools again over the same directories, as a plugin
// process restarted by the host would.
func restart(t *testing.T, cfg Config) env {
	tools, err := Tools(cfg)
	return env{cfg: cfg, Tools: plugintest.Server(t, tools, err)}
}

func (e env) file(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.cfg.Root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestWriteReadRoundTrip(t *testing.T) {
	e := setup(t)
	out := e.Call("files.write", map[string]any{"path": "notes/today.md", "content": "héllo\n"}, "")
	if out["created"] != true || out["bytes_written"] != json.Number("7") || out["path"] != "notes/today.md" {
		t.Fatalf("write = %v", out)
	}
	if got := e.file(t, "notes/today.md"); got != "héllo\n" {
		t.Fatalf("on disk %q", got)
	}
	out = e.Call("files.write", map[string]any{"path": "notes/today.md", "content": "again"}, "")
	if out["created"] != false || e.file(t, "notes/today.md") != "again" {
		t.Fatalf("overwrite = %v, disk %q", out, e.file(t, "notes/today.md"))
	}
	e.Call("files.write", map[string]any{"path": "notes/today.md", "content": "+more", "mode": "append"}, "")
	read := e.Call("files.read", map[string]any{"path": "notes/today.md"}, "")
	if read["content"] != "again+more" || read["encoding"] != "utf-8" || read["truncated"] != false || read["size"] != json.Number("10") {
		t.Fatalf("read = %v", read)
	}
	e.Refused("files.write", map[string]any{"path": "notes/today.md", "content": "x", "mode": "create_new"}, "", "path")
	e.Refused("files.write", map[string]any{"path": "notes", "content": "x"}, "", "path")
	e.Refused("files.write", map[string]any{"path": "bin", "content": "%%%", "encoding": "base64"}, "", "content")
}

func TestReadBinaryAndTruncated(t *testing.T) {
	e := setup(t)
	raw := []byte{0xff, 0x00, 0xfe, 'a'}
	e.Call("files.write", map[string]any{"path": "b.bin", "content": base64.StdEncoding.EncodeToString(raw), "encoding": "base64"}, "")
	read := e.Call("files.read", map[string]any{"path": "b.bin"}, "")
	if read["encoding"] != "base64" || read["content"] != base64.StdEncoding.EncodeToString(raw) {
		t.Fatalf("read binary = %v", read)
	}
	e.Call("files.write", map[string]any{"path": "u.txt", "content": "aé"}, "") // é is 2 bytes
	read = e.Call("files.read", map[string]any{"path": "u.txt", "max_bytes": 2}, "")
	if read["content"] != "a" || read["truncated"] != true || read["encoding"] != "utf-8" {
		t.Fatalf("truncated read split a rune: %v", read)
	}
	e.Refused("files.read", map[string]any{"path": "missing.txt"}, "", "path")
	e.Refused("files.read", map[string]any{"path": "."}, "", "path")
}

func TestListAndSearch(t *testing.T) {
	e := setup(t)
	for name, content := range map[string]string{
		"a.csv": "id,name\n1,Alpha\n", "docs/readme.md": "Intro\nthe ALPHA plan\n", "docs/deep/x.txt": "nothing",
	} {
		e.Call("files.write", map[string]any{"path": name, "content": content}, "")
	}
	top := e.Call("files.list", map[string]any{}, "")
	if got := paths(top["files"]); got != "a.csv docs etc outside-link" {
		t.Fatalf("list . = %s", got)
	}
	all := e.Call("files.list", map[string]any{"path": "docs", "recursive": true, "pattern": "*.*"}, "")
	if got := paths(all["files"]); got != "docs/deep/x.txt docs/readme.md" {
		t.Fatalf("list docs recursive *.* = %s", got)
	}
	limited := e.Call("files.list", map[string]any{"recursive": true, "max_entries": 2}, "")
	if len(limited["files"].([]any)) != 2 || limited["truncated"] != true {
		t.Fatalf("max_entries 2 = %v", limited)
	}
	e.Refused("files.list", map[string]any{"path": "a.csv"}, "", "path")
	e.Refused("files.list", map[string]any{"pattern": "["}, "", "pattern")

	s := e.Call("files.search", map[string]any{"query": "alpha"}, "")
	if got := matchList(s["matches"]); got != "a.csv:2:1,Alpha docs/readme.md:2:the ALPHA plan" {
		t.Fatalf("search alpha = %s", got)
	}
	s = e.Call("files.search", map[string]any{"query": "Alpha", "case_sensitive": true, "in": "contents"}, "")
	if got := matchList(s["matches"]); got != "a.csv:2:1,Alpha" {
		t.Fatalf("case-sensitive search = %s", got)
	}
	s = e.Call("files.search", map[string]any{"query": `^read.*\.md$`, "regexp": true, "in": "names"}, "")
	if got := matchList(s["matches"]); got != "docs/readme.md:0:readme.md" {
		t.Fatalf("name regexp search = %s", got)
	}
	s = e.Call("files.search", map[string]any{"query": "secret"}, "")
	if len(s["matches"].([]any)) != 0 {
		t.Fatalf("search followed a symlink out of the root: %v", s)
	}
	s = e.Call("files.search", map[string]any{"query": "a", "max_results": 1}, "")
	if len(s["matches"].([]any)) != 1 || s["truncated"] != true {
		t.Fatalf("max_results 1 = %v", s)
	}
	e.Refused("files.search", map[string]any{"query": "(", "regexp": true}, "", "query")
}

func TestDelete(t *testing.T) {
	e := setup(t)
	e.Call("files.write", map[string]any{"path": "d/a.txt", "content": "a"}, "")
	e.Refused("files.delete", map[string]any{"path": "d"}, "", "recursive")
	out := e.Call("files.delete", map[string]any{"path": "d/a.txt"}, "")
	if out["kind"] != "file" || out["deleted"] != true {
		t.Fatalf("delete = %v", out)
	}
	e.Call("files.write", map[string]any{"path": "d/b/c.txt", "content": "c"}, "")
	if out := e.Call("files.delete", map[string]any{"path": "d", "recursive": true}, ""); out["kind"] != "dir" {
		t.Fatalf("delete dir = %v", out)
	}
	if _, err := os.Stat(filepath.Join(e.cfg.Root, "d")); !os.IsNotExist(err) {
		t.Fatalf("d still exists: %v", err)
	}
	e.Refused("files.delete", map[string]any{"path": "d"}, "", "path")
	e.Refused("files.delete", map[string]any{"path": "."}, "", "path")
	e.Refused("files.delete", map[string]any{"path": "./x/.."}, "", "path")
}

// Every tool refuses every way out of the root, and nothing outside changes.
func TestEscapesRefused(t *testing.T) {
	e := setup(t)
	outside := filepath.Join(filepath.Dir(e.cfg.Root), "outside.txt")
	for _, p := range []string{"../outside.txt", "/etc/passwd", "etc/passwd", "etc", "outside-link", "a/../../outside.txt", outside} {
		e.Refused("files.read", map[string]any{"path": p}, "", "path")
		e.Refused("files.write", map[string]any{"path": p, "content": "pwned"}, "", "path")
		e.Refused("files.write", map[string]any{"path": p, "content": "pwned", "mode": "append"}, "", "path")
		e.Refused("files.delete", map[string]any{"path": p}, "", "path")
		e.Refused("files.list", map[string]any{"path": p}, "", "path")
		e.Refused("files.search", map[string]any{"query": "x", "path": p}, "", "path")
	}
	e.Refused("files.write", map[string]any{"path": "etc/new-file", "content": "pwned"}, "", "path")
	if data, _ := os.ReadFile(outside); string(data) != "secret" {
		t.Fatalf("outside file changed to %q", data)
	}
	if _, err := os.Stat("/etc/new-file"); err == nil {
		t.Fatal("/etc/new-file was created")
	}
}

func TestIdempotentWriteAndDeleteSurviveRestart(t *testing.T) {
	e := setup(t)
	appendCall := map[string]any{"path": "log.txt", "content": "line\n", "mode": "append"}
	first := e.Call("files.write", appendCall, "step-1")
	second := e.Call("files.write", appendCall, "step-1")
	if e.file(t, "log.txt") != "line\n" || first["created"] != true || second["created"] != true {
		t.Fatalf("same key twice: disk %q, results %v %v", e.file(t, "log.txt"), first, second)
	}
	e.Call("files.write", appendCall, "step-2")
	if e.file(t, "log.txt") != "line\nline\n" {
		t.Fatalf("a new key did not append: %q", e.file(t, "log.txt"))
	}

	e = restart(t, e.cfg)
	if again := e.Call("files.write", appendCall, "step-1"); again["created"] != true || e.file(t, "log.txt") != "line\nline\n" {
		t.Fatalf("after restart the key was forgotten: %v, disk %q", again, e.file(t, "log.txt"))
	}
	del := map[string]any{"path": "log.txt"}
	e.Call("files.delete", del, "del-1")
	e = restart(t, e.cfg)
	if out := e.Call("files.delete", del, "del-1"); out["deleted"] != true {
		t.Fatalf("replayed delete = %v", out)
	}
	e.Refused("files.delete", del, "del-2", "path") // a new key really tries again
	e.Refused("files.write", map[string]any{"path": "other.txt", "content": "x"}, "step-1", "idempotency_key")
}

func TestConfigFromEnvDefaultsToSandbox(t *testing.T) {
	data := t.TempDir()
	t.Setenv("ORDO_PLUGIN_DATA_DIR", data)
	t.Setenv(RootEnv, "")
	cfg, err := ConfigFromEnv()
	if err != nil || cfg.Root != filepath.Join(data, "root") || cfg.DataDir != data {
		t.Fatalf("ConfigFromEnv = %+v, %v", cfg, err)
	}
	t.Setenv(RootEnv, filepath.Join(data, "no-such-dir"))
	cfg, err = ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Tools(cfg); err == nil {
		t.Fatal("Tools accepted a root that does not exist")
	}
}

func paths(v any) string {
	var out []string
	for _, f := range v.([]any) {
		out = append(out, f.(map[string]any)["path"].(string))
	}
	return strings.Join(out, " ")
}

func matchList(v any) string {
	var out []string
	for _, m := range v.([]any) {
		m := m.(map[string]any)
		out = append(out, m["path"].(string)+":"+string(m["line"].(json.Number))+":"+m["text"].(string))
	}
	return strings.Join(out, " ")
}

// TestReadNamedPipe: a named pipe in the root is refused at once. Opening it
// for reading used to wait for a writer, holding the call until its timeout
// and a plugin thread for good.
func TestReadNamedPipe(t *testing.T) {
	e := setup(t)
	plugintest.OnPipe(t, filepath.Join(e.cfg.Root, "pipe"), func() {
		if err := e.Refused("files.read", map[string]any{"path": "pipe"}, "", "path"); !strings.Contains(err.Message, "not a regular file") {
			t.Errorf("read pipe: %v", err)
		}
	})
}

// TestReadFitsTheHost: files.read answers within what the host accepts
// from a plugin (contracts.MaxMessageBytes), cutting the content (truncated)
// where its JSON would not fit. 16 MiB of text, 4 MiB of "<" (6 bytes each
// in JSON) or 13 MiB of binary (base64) used to fail at the host.
func TestReadFitsTheHost(t *testing.T) {
	e := setup(t)
	for name, data := range map[string]string{
		"text.txt":   strings.Repeat("a", 16<<20),
		"lt.txt":     strings.Repeat("é<", 2<<20),
		"binary.bin": strings.Repeat("\xff", 13<<20),
	} {
		os.WriteFile(filepath.Join(e.cfg.Root, name), []byte(data), 0o644)
		got := e.Call("files.read", map[string]any{"path": name, "max_bytes": 16 << 20}, "")
		answer, _ := json.Marshal(got)
		if len(answer) > contracts.MaxMessageBytes || got["truncated"] != true {
			t.Errorf("%s: answer of %d bytes, truncated %v", name, len(answer), got["truncated"])
		}
		content := got["content"].(string)
		if got["encoding"] == "base64" {
			b, _ := base64.StdEncoding.DecodeString(content)
			content = string(b)
		}
		if len(content) < 1<<20 || !strings.HasPrefix(data, content) {
			t.Errorf("%s: content of %d bytes is not a prefix of at least 1 MiB", name, len(content))
		}
	}
}

// TestListAndSearchFitTheHost: files.list and files.search stop (truncated)
// before their paths pass what the host accepts from a plugin. 800 files
// with long paths of "<" (6 bytes each in JSON) answered 19 MB.
func TestListAndSearchFitTheHost(t *testing.T) {
	e := setup(t)
	root, err := os.OpenRoot(e.cfg.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	dir := strings.TrimSuffix(strings.Repeat(strings.Repeat("<", 250)+"/", 15), "/")
	if err := root.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 800 {
		if err := root.WriteFile(dir+"/"+strings.Repeat("<", 240)+strconv.Itoa(i), []byte("needle\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for tool, payload := range map[string]map[string]any{
		"files.list":   {"recursive": true, "max_entries": 10000},
		"files.search": {"query": "needle", "in": "contents", "max_results": 1000},
	} {
		got := e.Call(tool, payload, "")
		answer, _ := json.Marshal(got)
		if len(answer) > contracts.MaxMessageBytes || got["truncated"] != true {
			t.Errorf("%s: answer of %d bytes, truncated %v", tool, len(answer), got["truncated"])
		}
	}
}

// TestOrdoDataHidden: with the root set to a directory that holds Ordo's
// data (a home directory), the tools cannot reach that data: a plan could
// otherwise read or rewrite the run store and forge the idempotency
// journal, or delete them, also by deleting a parent (.local) recursively.
func TestOrdoDataHidden(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "ordo")
	cfg := Config{Root: home, DataDir: filepath.Join(data, "plugins", "files")}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(cfg.DataDir, 0o700))
	must(os.WriteFile(filepath.Join(data, "ordo.db"), []byte("secret run store"), 0o600))
	must(os.WriteFile(filepath.Join(home, "doc.txt"), []byte("not secret"), 0o644))
	must(os.Symlink(data, filepath.Join(home, "link")))
	e := restart(t, cfg)
	for _, path := range []string{".local/ordo/ordo.db", ".local/ordo/plugins/files/files-journal.jsonl", "link/ordo.db", ".local/x/../ordo"} {
		e.Refused("files.read", map[string]any{"path": path}, "", "path")
		e.Refused("files.write", map[string]any{"path": path, "content": "x"}, "", "path")
		e.Refused("files.delete", map[string]any{"path": path, "recursive": true}, "", "path")
	}
	// Deleting a directory that holds the data deletes the data: refused.
	for _, path := range []string{".local", "./.local/"} {
		e.Refused("files.delete", map[string]any{"path": path, "recursive": true}, "", "path")
	}
	must(os.Symlink(".local", filepath.Join(home, "link-to-parent")))
	e.Call("files.delete", map[string]any{"path": "link-to-parent"}, "") // the link only
	e.Refused("files.list", map[string]any{"path": ".local/ordo"}, "", "path")
	listed := e.Call("files.list", map[string]any{"recursive": true}, "")
	found := e.Call("files.search", map[string]any{"query": "secret"}, "")
	if text := asText(listed) + asText(found); strings.Contains(text, ".local/ordo") || !strings.Contains(text, "doc.txt") {
		t.Fatalf("list and search show %s", text)
	}
	if got := e.file(t, ".local/ordo/ordo.db"); got != "secret run store" {
		t.Fatalf("ordo.db holds %q", got)
	}
}

func asText(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
