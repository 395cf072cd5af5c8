package main_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The plugin how-to as a plugin author follows it, outside the
// repository: `ordo plugins new` writes a module into a temporary
// directory, `go mod tidy`, `make` and the module's own test pass there,
// `ordo plugins add` installs the plugin into the plugins directory a
// running `ordo serve` watches, its tool shows in tools/list, and a plan
// executed over MCP gets its answer.
func TestPluginsNewBuildsAndServes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin module")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed: the scaffold's Makefile cannot run")
	}
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(t.TempDir(), "greet")
	// Run from the repository: the checkout is found above the working directory.
	r := e.ordo("", "plugins", "new", "greet", dir)
	r.want(t, 0)
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !strings.Contains(string(gomod), "\nreplace github.com/ordo-run/ordo => "+repoRoot+"\n") {
		t.Fatalf("go.mod does not take the SDK from %s (%v):\n%s", repoRoot, err, gomod)
	}
	for _, step := range [][]string{{"go", "mod", "tidy"}, {"make"}, {"go", "test", "./..."}, {"gofmt", "-l", "."}} {
		cmd := exec.Command(step[0], step[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil || (step[0] == "gofmt" && len(out) > 0) {
			t.Fatalf("%s in the scaffold: %v\n%s", strings.Join(step, " "), err, out)
		}
	}
	bin := filepath.Join(dir, "ordo-plugin-greet")
	if got, want := readFile(t, bin+".sha256"), sha256File(t, bin)+"  ordo-plugin-greet\n"; got != want {
		t.Errorf("make wrote the checksum %q, want %q", got, want)
	}

	c := serveStdio(t, e, "")
	e.ordo("", "plugins", "add", bin).want(t, 0)
	waitForTool(t, c, "greet__hello", true) // the server picks the new file up
	_, body, err := callAdmin(t, c, "execute", map[string]any{
		"plan": map[string]any{"version": "1.0", "goal": "greet Ada", "timezone": "UTC", "actions": []any{map[string]any{
			"id": "greet", "tool": "greet.hello", "intent": "other", "requires": []any{}, "produces": []any{"greeting"},
			"inputs": map[string]any{"name": "Ada"},
		}}},
		"options": map[string]any{"auto_approve": true},
	})
	if err != nil || !strings.Contains(body, `\"status\":\"completed\"`) || !strings.Contains(body, "Hello, Ada!") {
		t.Fatalf("execute with the scaffold's tool: %v\n%s", err, body)
	}
}

// `ordo plugins new` refuses, with a coded error and without writing
// anything, a bad name, a directory that holds something, and a missing
// or wrong checkout; it finds the checkout above the ordo executable.
func TestPluginsNewRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	elsewhere := t.TempDir() // outside any checkout
	full := filepath.Join(t.TempDir(), "full")
	if err := os.MkdirAll(filepath.Join(full, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(elsewhere, "x")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"Bad", dir}, `plugin name "Bad"`},
		{[]string{"9lives", dir}, "starts with a letter"},
		{[]string{"files", dir}, "bundled"},
		{[]string{"greet", full}, "is not empty"},
		{[]string{"greet", dir, "--ordo-src", elsewhere}, "--ordo-src " + elsewhere + ": not an Ordo checkout"},
		{[]string{"greet", dir}, "no Ordo checkout found above " + elsewhere},
	} {
		r := e.ordoIn(filepath.Join(binDir, "ordo"), elsewhere, append([]string{"plugins", "new"}, tc.args...)...)
		r.want(t, 2)
		if !strings.Contains(r.stderr, "error 1000") || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("plugins new %v: stderr lacks %q:\n%s", tc.args, tc.want, r.stderr)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused scaffold left %s (%v)", dir, err)
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("the non-empty directory changed: %v", entries)
	}

	// An ordo built in a checkout (its ./bin, say) finds that checkout
	// from anywhere: here a stand-in checkout with ordo linked into it.
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module github.com/ordo-run/ordo\n\ngo 1.26.8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.sum"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(src, "bin", "ordo")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(binDir, "ordo"), exe); err != nil {
		t.Fatal(err)
	}
	e.ordoIn(exe, elsewhere, "plugins", "new", "greet", dir).want(t, 0)
	if gomod := readFile(t, filepath.Join(dir, "go.mod")); !strings.Contains(gomod, "=> "+src+"\n") {
		t.Errorf("go.mod does not replace the SDK with %s:\n%s", src, gomod)
	}
}

// ordoIn runs exe, an ordo binary, in dir.
func (e *env) ordoIn(exe, dir string, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Env = dir, e.vars
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		e.t.Fatalf("%s %v: %v", exe, args, err)
	}
	return result{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(readFile(t, path)))
	return hex.EncodeToString(sum[:])
}
