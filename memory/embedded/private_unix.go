//go:build unix

package embedded

import (
	"os"
	"syscall"
)

// ownedByMe reports whether the running user owns the file.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
