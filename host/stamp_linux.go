package host

import (
	"os"
	"syscall"
)

// stampOf is the file's stamp; a file rewritten in place changes its
// change time (which no user can set) and a replaced one its inode.
func stampOf(path string) (fileStamp, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileStamp{}, false
	}
	return fileStamp{Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size,
		MtimeNS: st.Mtim.Nano(), CtimeNS: st.Ctim.Nano()}, true
}
