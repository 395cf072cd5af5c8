package safepath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/toolerr"
)

// Root is a directory that tool paths may not leave.
type Root struct {
	dir    string // absolute, symlinks resolved
	fs     *os.Root
	hidden []string // root-relative, slash-separated: see Hide
	links  bool     // see AllowHardLinks
}

// Open opens dir as a root. dir must exist and be a directory; a bad one is
// a CodeInvalidConfig error naming envVar (the setting it came from).
func Open(envVar, dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "%s: root %q: %w", envVar, dir, err).With("setting", envVar)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "%s: root %q: %w", envVar, dir, err).With("setting", envVar)
	}
	if !info.IsDir() {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "%s: root %q is not a directory", envVar, dir).With("setting", envVar)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "%s: open root %q: %w", envVar, dir, err).With("setting", envVar)
	}
	return &Root{dir: abs, fs: r}, nil
}

// FS is the confined file system that all I/O under the root goes through.
func (r *Root) FS() *os.Root { return r.fs }

// Close releases the root's directory handle.
func (r *Root) Close() error { return r.fs.Close() }

// Resolve checks that name, the value of payload field field, stays inside
// the root and returns its cleaned root-relative form ("." is the root
// itself). A refusal is a non-retryable tool error with details field and
// path.
func (r *Root) Resolve(field, name string) (string, error) {
	refuse := func(why string) error {
		return toolerr.Refuse(field, "%s %q %s", field, name, why).With("path", toolerr.Shown(name))
	}
	switch {
	case name == "":
		return "", refuse("is empty")
	case strings.ContainsRune(name, 0):
		return "", refuse("contains a NUL byte")
	case filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`):
		return "", refuse("is absolute; paths are relative to the root")
	}
	clean := filepath.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", refuse("escapes the root")
	}
	// Resolve the longest existing prefix: a symlink anywhere in it may point
	// outside. A path that does not exist yet is judged by its parent.
	existing := filepath.Join(r.dir, clean)
	for {
		_, err := os.Lstat(existing)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			var pe *fs.PathError
			if errors.As(err, &pe) { // its path is absolute: the root's place is not the caller's to see
				err = pe.Err
			}
			return "", refuse(fmt.Sprintf("cannot be checked: %v", err))
		}
		existing = filepath.Dir(existing)
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", refuse("goes through a symlink that cannot be resolved")
	}
	if !within(r.dir, resolved) {
		return "", refuse("goes through a symlink that points outside the root")
	}
	if rel, _ := filepath.Rel(r.dir, resolved); r.Hidden(filepath.ToSlash(rel)) {
		return "", refuse("is in Ordo's own data directory, which the tools may not touch")
	}
	return clean, nil
}

// Hide keeps the tools out of dir (if it is inside the root): Ordo's own
// data, a root set to a home directory would otherwise hand a plan the run
// store and the idempotency journals to read, rewrite or delete. Resolve
// refuses paths into it, and walkers skip it (Hidden).
func (r *Root) Hide(dir string) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if rel, rerr := filepath.Rel(r.dir, abs); err == nil && rerr == nil && rel != "." && within(r.dir, abs) {
		r.hidden = append(r.hidden, filepath.ToSlash(rel))
	}
}

// HideOrdo hides a plugin's data directory and, when it is
// <data_dir>/plugins/<plugin> as the host makes it, the whole <data_dir>:
// the run store and every plugin's journals and stores.
func (r *Root) HideOrdo(pluginData string) {
	if pluginData == "" {
		return
	}
	r.Hide(pluginData)
	if plugins := filepath.Dir(pluginData); filepath.Base(plugins) == "plugins" {
		r.Hide(filepath.Dir(plugins))
	}
}

// Hidden reports whether name (root-relative, slash-separated, as fs.WalkDir
// gives it) is in a hidden directory.
func (r *Root) Hidden(name string) bool {
	for _, h := range r.hidden {
		if name == h || strings.HasPrefix(name, h+"/") {
			return true
		}
	}
	return false
}

// Holds reports whether removing name (root-relative, as Resolve returns
// it) would remove a directory Hide hides: name is one of its parents, as
// a home directory's .local is of ~/.local/share/ordo. Resolve refuses
// only paths into hidden directories. name's last element is taken as it
// is, since a removal does not follow a symlink there.
func (r *Root) Holds(name string) bool {
	parent, err := filepath.EvalSymlinks(filepath.Join(r.dir, filepath.Dir(name)))
	if err != nil {
		return true // it vanished: nothing to remove, and nothing said it is safe
	}
	rel, err := filepath.Rel(r.dir, filepath.Join(parent, filepath.Base(name)))
	if err != nil {
		return true
	}
	rel = filepath.ToSlash(rel)
	for _, h := range r.hidden {
		if rel == "." || strings.HasPrefix(h, rel+"/") {
			return true
		}
	}
	return false
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// AllowHardLinks lets the tools read and append to files that have other
// hard links (see Linked).
func (r *Root) AllowHardLinks() { r.links = true }

// Linked refuses (field, path shown as shown) a regular file with more
// than one hard link unless AllowHardLinks was called: its other names
// may be outside the root, where no path check reaches (a link to
// ~/.ssh/id_ed25519 made in the root, by its owner or by a tool such as
// cp -al), so reading it or appending to it reads or changes that file.
// Linux's protected_hardlinks does not help: it stops a user linking a
// file they cannot read and write, not the root's owner linking their own.
func (r *Root) Linked(field, shown string, info fs.FileInfo) error {
	if r.links || !info.Mode().IsRegular() || links(info) <= 1 {
		return nil
	}
	return toolerr.Refuse(field, "%s %q has %d hard links, and another of its names may be outside the root (the plugin's allow_hardlinks setting allows it)", field, shown, links(info)).
		With("path", toolerr.Shown(shown))
}

// OpenRegular opens name, already resolved, for reading and refuses (field,
// shown as shown) anything but a regular file, and a linked one (Linked).
// The open does not block: a named pipe would otherwise hold the call
// until a writer came (forever), and a device is no document.
func (r *Root) OpenRegular(field, shown, name string) (*os.File, fs.FileInfo, error) {
	f, err := r.fs.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, toolerr.FromOS(field, shown, err)
	}
	info, err := f.Stat()
	switch {
	case err != nil:
		err = toolerr.FromOS(field, shown, err)
	case !info.Mode().IsRegular():
		err = toolerr.Refuse(field, "%s %q is not a regular file", field, shown).With("path", toolerr.Shown(shown))
	default:
		if err = r.Linked(field, shown, info); err == nil {
			return f, info, nil
		}
	}
	f.Close()
	return nil, nil, err
}
