// Package ids makes Ordo's random identifiers: run ids, task tokens,
// session cookies, lease owners, record ids and temporary-file suffixes.
// It is the one place that reads crypto/rand for them, so every id has the
// same source of randomness and the same lowercase hex spelling; callers
// add their own prefix ("run_", "page_"). It imports nothing of Ordo, so
// any package may use it.
package ids

import (
	"crypto/rand"
	"encoding/hex"
)

// Hex returns n random bytes as 2n lowercase hex digits. crypto/rand.Read
// never fails on the platforms Go supports (it panics rather than return
// an error), so there is no error to hand back.
func Hex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
