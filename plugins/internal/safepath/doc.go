// Package safepath confines tool paths to a root directory.
//
// A path from a tool payload is refused when it is absolute, climbs out with
// "..", or reaches outside through a symlink in its existing prefix (resolved
// with filepath.EvalSymlinks). The check gives callers a coded error that
// names the offending field; the I/O itself then goes through an os.Root,
// so a symlink swapped in after the check still cannot escape.
package safepath
