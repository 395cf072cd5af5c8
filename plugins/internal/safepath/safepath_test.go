package safepath

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

func newRoot(t *testing.T) *Root {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink("/etc", filepath.Join(dir, "etc")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")))
	must(t, os.Symlink("sub", filepath.Join(dir, "inside")))
	must(t, os.Symlink("../../..", filepath.Join(dir, "sub", "deep", "up")))
	must(t, os.Symlink(filepath.Join(dir, "missing-target"), filepath.Join(dir, "dangling")))
	r, err := Open("TEST_ROOT", dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestResolveAccepts(t *testing.T) {
	r := newRoot(t)
	for name, want := range map[string]string{
		".":                 ".",
		"sub/a.txt":         "sub/a.txt",
		"./sub//a.txt":      "sub/a.txt",
		"sub/../sub/a.txt":  "sub/a.txt",
		"new/dir/file.txt":  "new/dir/file.txt",
		"inside/a.txt":      "inside/a.txt",
		"inside/new.txt":    "inside/new.txt",
		"sub/deep/new.json": "sub/deep/new.json",
	} {
		got, err := r.Resolve("path", name)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestResolveRefusesEscapes(t *testing.T) {
	r := newRoot(t)
	for _, name := range []string{
		"", "..", "../x", "sub/../../x", "/etc/passwd", "/",
		"etc", "etc/passwd", "etc/new-file", "passwd",
		"sub/deep/up", "sub/deep/up/etc/passwd",
		"dangling", "dangling/x", "a\x00b",
	} {
		got, err := r.Resolve("path", name)
		if err == nil {
			t.Errorf("Resolve(%q) = %q, want refusal", name, got)
			continue
		}
		e := contracts.AsError(err)
		if e.Code != contracts.CodeToolFailed || e.Retryable || e.Details["field"] != "path" || e.Details["path"] != name {
			t.Errorf("Resolve(%q): error %v with details %v, want a non-retryable tool error naming field path", name, err, e.Details)
		}
	}
}

// The os.Root behind the check refuses an escape even if the check were
// skipped, e.g. a symlink swapped in after Resolve.
func TestFSRefusesEscapeWithoutCheck(t *testing.T) {
	r := newRoot(t)
	if _, err := r.FS().ReadFile("passwd"); err == nil {
		t.Fatal("os.Root followed a symlink out of the root")
	}
	if _, err := r.FS().ReadFile("inside/a.txt"); err != nil {
		t.Fatalf("read through an inside symlink: %v", err)
	}
}

func TestOpenRefusesBadRoots(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	must(t, os.WriteFile(file, nil, 0o644))
	for _, d := range []string{filepath.Join(dir, "missing"), file} {
		_, err := Open("ORDO_X_ROOT", d)
		if e := contracts.AsError(err); err == nil || e.Code != contracts.CodeInvalidConfig || e.Details["setting"] != "ORDO_X_ROOT" {
			t.Errorf("Open(%q) = %v, want CodeInvalidConfig naming the setting", d, err)
		}
	}
}

// A root opened through a symlink is judged by where it leads: paths in it,
// existing or not, resolve (an unresolved root would see them "outside").
func TestRootThroughSymlinkIsResolved(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	must(t, os.Mkdir(real, 0o755))
	must(t, os.WriteFile(filepath.Join(real, "old.txt"), nil, 0o644))
	link := filepath.Join(dir, "link")
	must(t, os.Symlink(real, link))
	r, err := Open("X", link)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, name := range []string{"new.txt", "old.txt"} {
		if _, err := r.Resolve("path", name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// TestRefusalHidesRoot: a path that cannot be checked (a name over 255
// bytes, a file used as a directory) is refused without the root's
// absolute path, which the lstat error used to carry into the message.
func TestRefusalHidesRoot(t *testing.T) {
	r := newRoot(t)
	for _, name := range []string{strings.Repeat("b", 300), "sub/a.txt/x"} {
		_, err := r.Resolve("path", name)
		if err == nil || strings.Contains(err.Error(), r.dir) || !strings.Contains(err.Error(), "cannot be checked") {
			t.Errorf("Resolve(%.20q) = %v, want a refusal without %s", name, err, r.dir)
		}
	}
}
