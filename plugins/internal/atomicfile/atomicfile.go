package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile atomically replaces path with data.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer root.Close()
	return WriteIn(root, filepath.Base(path), data, perm)
}

// WriteIn atomically replaces name (relative to root) with data. All I/O goes
// through root, so name cannot leave it.
func WriteIn(root *os.Root, name string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Split(name)
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(suffix[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = root.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = root.Rename(tmp, name); err != nil {
		return err
	}
	return SyncDir(root, dir)
}

// SyncDir fsyncs directory dir (relative to root; "" is root itself) so a
// rename or a new file in it survives a crash.
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
