package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ordo-run/ordo/internal/ids"
	"github.com/ordo-run/ordo/plugins/internal/killpoint"
)

// WriteFile atomically replaces path with data. point, when not empty, is
// the kill point reached once the new content is durable in its temporary
// file and not yet in place.
func WriteFile(path string, data []byte, perm os.FileMode, point string) error {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer root.Close()
	return WriteIn(root, filepath.Base(path), "", data, perm, point)
}

// WriteIn atomically replaces name (relative to root) with data, through
// the temporary file tmp in name's directory (a random one when empty; an
// existing tmp is overwritten, so a caller that names it can retry after a
// crash left it behind). All I/O goes through root, so name cannot leave it.
func WriteIn(root *os.Root, name, tmp string, data []byte, perm os.FileMode, point string) error {
	tmp, err := stage(root, name, tmp, data, perm, point)
	if err != nil {
		return err
	}
	if err = root.Rename(tmp, name); err != nil {
		_ = root.Remove(tmp)
		return err
	}
	return SyncDir(root, filepath.Dir(name))
}

// CreateIn is WriteIn for a file that must not exist yet: the temporary
// file is hard-linked to name, which fails with fs.ErrExist if name exists
// (checked by the kernel, so there is no window for another creator), then
// removed. name appears whole or not at all.
func CreateIn(root *os.Root, name, tmp string, data []byte, perm os.FileMode, point string) error {
	tmp, err := stage(root, name, tmp, data, perm, point)
	if err != nil {
		return err
	}
	err = root.Link(tmp, name)
	if rerr := root.Remove(tmp); err == nil {
		err = rerr
	}
	if err != nil {
		return err
	}
	return SyncDir(root, filepath.Dir(name))
}

// maxName is the longest file name (in bytes) Linux file systems take.
const maxName = 255

// TempName is the temporary file of name for tag: in name's directory,
// hidden, and recognisable as Ordo's. A long name is cut (never inside a
// character) so that the temporary name still fits in maxName: a file named
// with up to maxName bytes can be written.
func TempName(name, tag string) string {
	dir, base := filepath.Split(name)
	suffix := ".ordo-" + tag + ".tmp"
	if keep := max(0, maxName-1-len(suffix)); len(base) > keep {
		base = strings.ToValidUTF8(base[:keep], "")
	}
	return filepath.Join(dir, "."+base+suffix)
}

// stage writes data to tmp (beside name) and fsyncs it.
func stage(root *os.Root, name, tmp string, data []byte, perm os.FileMode, point string) (_ string, err error) {
	if tmp == "" {
		tmp = TempName(name, ids.Hex(6))
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return "", err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	killpoint.Here(point)
	return tmp, nil
}

// SyncDir fsyncs directory dir (relative to root; "" or "." is root itself)
// so a rename or a new file in it survives a crash.
func SyncDir(root *os.Root, dir string) error {
	if dir == "" {
		dir = "."
	}
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
