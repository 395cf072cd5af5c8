package ids

import (
	"regexp"
	"testing"
)

// Ids keep the spelling stored ids already have: 2n lowercase hex digits,
// and two calls never give the same id.
func TestHex(t *testing.T) {
	for _, n := range []int{4, 6, 8, 12, 16, 32} {
		a, b := Hex(n), Hex(n)
		if !regexp.MustCompile(`^[0-9a-f]+$`).MatchString(a) || len(a) != 2*n {
			t.Fatalf("Hex(%d) = %q, want %d hex digits", n, a, 2*n)
		}
		if a == b {
			t.Fatalf("Hex(%d) gave %q twice", n, a)
		}
	}
}
