// Package atomicfile replaces or creates a file so that a crash at any
// moment leaves either the old content or the new, never a torn mix: write
// a temporary file in the same directory, fsync it, rename (or, to create,
// hard-link) it to the target, fsync the directory. The notes store and
// files.write rely on it.
package atomicfile
