//go:build linux

package embedded_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/fulldisk"
	"github.com/ordo-run/ordo/memory/embedded"
	"github.com/ordo-run/ordo/memory/storetest"
)

// openEnv tells a re-executed test binary to open the store at its value
// and print what Open said.
const openEnv = "ORDO_EMBEDDED_OPEN_CHILD"

// TestOpenChild is the opener of TestOpenSaysWhy, run as another user.
func TestOpenChild(t *testing.T) {
	path := os.Getenv(openEnv)
	if path == "" {
		t.Skip("helper process for TestOpenSaysWhy")
	}
	s, err := embedded.Open(path)
	if err == nil {
		s.Close()
	}
	fmt.Printf("code %d: %v\n", contracts.CodeOf(err), err)
}

// openAsOther opens the store at path as a user who is not its owner (as
// nobody, re-executing a copy of the test binary, when the test runs as
// root; as this user otherwise, since the test's chmod then binds it) and
// returns what Open said.
func openAsOther(t *testing.T, path string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		s, err := embedded.Open(path)
		if err == nil {
			s.Close()
		}
		return fmt.Sprintf("code %d: %v", contracts.CodeOf(err), err)
	}
	// nobody must reach the binary: a copy in a directory open to all.
	dir, err := os.MkdirTemp("", "ordo-open-child-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "embedded.test")
	copyFile(t, os.Args[0], bin)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestOpenChild$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{openEnv + "=" + path, "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, "code ") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("child said nothing of Open:\n%s", out)
	return ""
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// makeStore creates a store holding one run in a directory of its own,
// the file and the directory open to all, and returns the file's path.
func makeStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "ordo.db")
	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(context.Background(), storetest.SimpleRun("r1", "u", contracts.RunCompleted, 1, storetest.Base)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != filepath.Clean(os.TempDir()) && d != filepath.Dir(d); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestOpenSaysWhy: a store the user cannot open is refused with CodeStore
// and what the file system says: SQLite's own words ("attempt to write a
// readonly database", "unable to open database file") do not tell a
// directory the user may not write in from a file they may not read.
func TestOpenSaysWhy(t *testing.T) {
	t.Run("directory not writable", func(t *testing.T) {
		path := makeStore(t)
		if err := os.Chmod(filepath.Dir(path), 0o555); err != nil {
			t.Fatal(err)
		}
		got := openAsOther(t, path)
		want := fmt.Sprintf("code %d: ", contracts.CodeStore)
		if !strings.HasPrefix(got, want) || !strings.Contains(got, "cannot write in "+filepath.Dir(path)+": permission denied") {
			t.Fatalf("Open said %q", got)
		}
	})
	t.Run("file not readable", func(t *testing.T) {
		path := makeStore(t)
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() != 0 {
			os.Chmod(path, 0)
		}
		got := openAsOther(t, path)
		want := fmt.Sprintf("code %d: ", contracts.CodeStore)
		if !strings.HasPrefix(got, want) || !strings.Contains(got, "cannot write "+path+": permission denied") {
			t.Fatalf("Open said %q", got)
		}
	})
}

// TestOpenOnFullDisk (root: a 256 KiB tmpfs): on a full file system a
// Save and a lease change are refused with CodeStore and change nothing, and Open says the
// disk is full (SQLite said "disk I/O error (4874)": it could not grow
// the -shm file); once space is freed the store opens, the run loads as it
// was, and the refused Save succeeds.
func TestOpenOnFullDisk(t *testing.T) {
	mnt := fulldisk.Mount(t, 256)
	path, fill := filepath.Join(mnt, "ordo.db"), filepath.Join(mnt, "fill")
	ctx := context.Background()
	first := storetest.SimpleRun("r1", "u", contracts.RunRunning, 1, storetest.Base)
	next := storetest.SimpleRun("r1", "u", contracts.RunRunning, 2, storetest.Base)
	next.Goal = strings.Repeat("a long goal ", 2000)
	// open opens the store and checks r1 is first, as saved.
	open := func() *embedded.Store {
		t.Helper()
		s, err := embedded.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.Load(ctx, "r1"); err != nil || got.Seq != 1 || got.Goal != first.Goal {
			t.Fatalf("r1 is not as saved: %+v %v", got, err)
		}
		return s
	}

	s, err := embedded.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, first); err != nil {
		t.Fatal(err)
	}
	fulldisk.Fill(t, fill)
	if err := s.Save(ctx, next); contracts.CodeOf(err) != contracts.CodeStore || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("Save on a full disk: %v", err)
	}
	// A lease change refused for the disk is named for itself, once (it
	// was "acquire lease: ordo 9002: save checkpoint: ...").
	if err := s.Acquire(ctx, "r1", "me", time.Minute); contracts.CodeOf(err) != contracts.CodeStore ||
		err.Error() != "ordo 9002: acquire lease: database or disk is full (13)" {
		t.Fatalf("Acquire on a full disk: %v", err)
	}
	s.Close()
	os.Remove(fill)
	open().Close() // folds the -wal into the file and removes it with the -shm

	fulldisk.Fill(t, fill)
	_, err = embedded.Open(path)
	if contracts.CodeOf(err) != contracts.CodeStore || !strings.Contains(err.Error(), "cannot write in "+mnt+": no space left on device") {
		t.Fatalf("Open on a full disk: %v", err)
	}
	os.Remove(fill)
	s = open()
	defer s.Close()
	if err := s.Save(ctx, next); err != nil {
		t.Fatalf("the refused Save, again: %v", err)
	}
}
