//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package console

import (
	"os"

	"golang.org/x/sys/unix"
)

// echoSwitch turns the terminal's echo of what is typed on f off and on,
// for a secret answer; nil when f is not a terminal.
func echoSwitch(f *os.File) func(on bool) {
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, getTermios)
	if err != nil {
		return nil
	}
	saved := *t
	return func(on bool) {
		tt := saved
		if !on {
			tt.Lflag &^= unix.ECHO
		}
		_ = unix.IoctlSetTermios(fd, setTermios, &tt)
	}
}
