//go:build linux

// Package ptytest opens pseudo-terminals for tests of what Ordo does on
// a terminal (echo, the spinner's control characters).
package ptytest

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ordo-run/ordo/internal/syncbuf"
)

// Open opens a pseudo-terminal pair: what is written to the master is
// typed on the terminal (the replica), and what the terminal shows (what
// is written to the replica, and its echo) is read from the master into
// shown. It skips t where there are none.
func Open(t testing.TB) (master, replica *os.File, shown *syncbuf.Buffer) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	shown = &syncbuf.Buffer{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			shown.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	return m, r, shown
}
