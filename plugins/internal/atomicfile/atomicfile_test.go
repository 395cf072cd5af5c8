package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWriteFileReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "store.json")
	for _, content := range []string{"first", "second, longer"} {
		if err := WriteFile(path, []byte(content), 0o600, ""); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("dir holds %d entries, want only the target: %v", len(entries), entries)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", info.Mode().Perm())
	}
}

func TestWriteInSubdirAndRefusesEscape(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := WriteIn(root, "sub/x.txt", "", []byte("x"), 0o644, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "sub", "x.txt")); string(got) != "x" {
		t.Fatalf("got %q", got)
	}
	if err := WriteIn(root, "../escape.txt", "", []byte("x"), 0o644, ""); err == nil {
		t.Fatal("WriteIn wrote outside its root")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.txt")); err == nil {
		t.Fatal("escape.txt exists outside the root")
	}
}

func TestWriteFileMissingDirFails(t *testing.T) {
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "f"), nil, 0o600, ""); err == nil {
		t.Fatal("want an error for a missing directory")
	}
}

// CreateIn makes a file whole, refuses an existing one with fs.ErrExist
// (leaving it as it was) and leaves no temporary file either way; a temp
// file a crash left under the same name is reused, not a failure.
func TestCreateInRefusesExistingAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	tmp := TempName("a.txt", "k1")
	os.WriteFile(filepath.Join(dir, tmp), []byte("left by a crash"), 0o600)
	if err := CreateIn(root, "a.txt", tmp, []byte("first"), 0o644, ""); err != nil {
		t.Fatal(err)
	}
	if err := CreateIn(root, "a.txt", "", []byte("second"), 0o644, ""); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateIn over an existing file = %v, want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "first" {
		t.Fatalf("a.txt = %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("dir holds %v, want only a.txt", entries)
	}
}

// TestLongNames: a file whose name takes the whole 255 bytes can be
// replaced and created. Its temporary file, named after it, used to be too
// long a name itself (ENAMETOOLONG).
func TestLongNames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{strings.Repeat("a", 255), strings.Repeat("é", 127)} {
		if err := WriteFile(filepath.Join(dir, name), []byte("x"), 0o600, ""); err != nil {
			t.Fatalf("WriteFile %d bytes: %v", len(name), err)
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		tmp := TempName("sub/"+name, "0123456789abcdef")
		if base := filepath.Base(tmp); len(base) > maxName || !utf8.ValidString(base) {
			t.Fatalf("TempName = %q (%d bytes)", base, len(base))
		}
		os.Mkdir(filepath.Join(dir, "sub"), 0o700)
		if err := CreateIn(root, "sub/"+name, tmp, []byte("y"), 0o600, ""); err != nil {
			t.Fatalf("CreateIn %d bytes: %v", len(name), err)
		}
	}
}
