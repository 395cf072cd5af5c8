package jsonsize

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzLen checks that Len is never below what encoding/json writes, and
// that Prefix is the longest prefix, on a rune boundary, that fits its
// limit.
func FuzzLen(f *testing.F) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "<a href='x'>&</a>", "tab\tnl\n\x00\x1f", "é\u2028\u2029", "bad \xff\xfe utf-8"} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		data, _ := json.Marshal(s)
		if n := Len(s); n < len(data) {
			t.Fatalf("Len(%q) = %d, encoding/json writes %d", s, n, len(data))
		}
		limit = max(2, limit%(len(s)*6+3))
		p := Prefix(s, limit)
		if !strings.HasPrefix(s, p) || Len(p) > limit || (utf8.ValidString(s) && !utf8.ValidString(p)) {
			t.Fatalf("Prefix(%q, %d) = %q (Len %d)", s, limit, p, Len(p))
		}
		if p != s && Len(s[:len(p)+runeSize(s[len(p):])]) <= limit {
			t.Fatalf("Prefix(%q, %d) = %q stops short", s, limit, p)
		}
	})
}

func runeSize(s string) int {
	_, size := utf8.DecodeRuneInString(s)
	return size
}
