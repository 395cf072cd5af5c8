//go:build !unix

package safepath

import "io/fs"

// links is 1: the link count is not in a FileInfo here.
func links(fs.FileInfo) uint64 { return 1 }
