//go:build unix

package safepath

import (
	"io/fs"
	"syscall"
)

// links is info's hard link count.
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
