//go:build linux

// Package fulldisk gives tests a real small file system they can fill:
// a tmpfs mounted for the test (root only; the test is skipped, saying
// why, where it cannot be mounted).
package fulldisk

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size KiB on a new temporary directory, which it
// returns; it is unmounted when the test ends.
func Mount(t testing.TB, kib int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%dk", kib)); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// Fill appends to file until its file system is full.
func Fill(t testing.TB, file string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}
