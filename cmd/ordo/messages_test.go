package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesSayWhatIsWrong: messages name the actual problem (issue 18
// item 11, and error 4004).
func TestMessagesSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	// An unset --token-env variable is reported as unset, before any
	// connection is tried.
	r := e.ordo("", "plugins", "add", "--mcp-url", "http://127.0.0.1:1/mcp", "--token-env", "NO_SUCH_TOKEN", "--name", "web")
	r.want(t, 2)
	if !strings.Contains(r.stderr, "NO_SUCH_TOKEN (--token-env) is unset") || strings.Contains(r.stderr, "authoriz") {
		t.Errorf("unset --token-env:\n%s", r.stderr)
	}

	// A key given twice is named, with both lines.
	cfg := filepath.Join(e.home, "dup.yaml")
	os.WriteFile(cfg, []byte("parallelism: 2\nllm:\n  model: a\n  model: b\n"), 0o600)
	r = e.ordo("", "--config", cfg, "runs", "list")
	r.wantErr(t, 2, "config key llm.model: given twice, on lines 3 and 4")

	// No model: the error says which variables configure one and that a
	// plan file needs none.
	r = e.ordo("", "run", "List the widget sales")
	for _, s := range []string{"error 4004", "OPENAI_API_KEY", "ORDO_LLM_MODEL", "ORDO_LLM_BASE_URL", "ordo run --plan FILE"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("no model: stderr lacks %q:\n%s", s, r.stderr)
		}
	}
}

// TestPluginsAddTwice: add writes the checksum it verified (no "no
// checksum" warning); adding a name the plugins directory already holds,
// as NAME or ordo-plugin-NAME, is a coded error that changes nothing,
// unless --force.
func TestPluginsAddTwice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "plugins", "add", hello, "--name", "hello")
	r.want(t, 0)
	if strings.Contains(r.stderr, "checksum") {
		t.Errorf("add warns about a checksum it writes:\n%s", r.stderr)
	}
	dir := filepath.Join(e.data, "plugins.d")
	sum, _ := os.ReadFile(filepath.Join(dir, "hello.sha256"))
	r = e.ordo("", "plugins", "add", hello, "--name", "hello")
	r.want(t, 2)
	if !strings.Contains(r.stderr, "error 1000") || !strings.Contains(r.stderr, "already installed") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("second add:\n%s", r.stderr)
	}
	r = e.ordo("", "plugins", "add", hello, "--name", "hello", "--force")
	r.want(t, 0)
	if now, _ := os.ReadFile(filepath.Join(dir, "hello.sha256")); len(sum) == 0 || string(now) != string(sum) {
		t.Errorf("hello.sha256 %q became %q", sum, now)
	}
	// The other spelling of the same plugin is found too.
	e.ordo("", "plugins", "remove", "hello").want(t, 0)
	bin, _ := os.ReadFile(hello)
	os.WriteFile(filepath.Join(dir, "ordo-plugin-hello"), bin, 0o755)
	before, _ := os.ReadDir(dir)
	e.ordo("", "plugins", "add", hello, "--name", "hello").want(t, 2)
	after, _ := os.ReadDir(dir)
	if len(after) != len(before) {
		t.Errorf("a refused add changed the plugins dir: %d entries, then %d", len(before), len(after))
	}
	e.ordo("", "plugins", "add", hello, "--name", "hello", "--force").want(t, 0)
	if _, err := os.Stat(filepath.Join(dir, "hello")); err == nil {
		t.Error("--force installed a second binary beside ordo-plugin-hello")
	}
	if _, err := os.Stat(filepath.Join(dir, "ordo-plugin-hello.sha256")); err != nil {
		t.Errorf("--force did not replace ordo-plugin-hello with its checksum: %v", err)
	}
}
