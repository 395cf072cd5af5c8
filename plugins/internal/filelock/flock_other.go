//go:build !unix

package filelock

import "os"

// Without flock(2) the lock is in-process only: on such systems several
// processes must not share a plugin data directory (docs/durability.md).
func flock(*os.File) error { return nil }

func funlock(*os.File) error { return nil }
