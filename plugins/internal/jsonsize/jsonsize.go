// Package jsonsize measures text as encoding/json writes it, so a plugin
// can keep an answer within what the host accepts (contracts.MaxMessageBytes)
// before building it: escaping makes some text six times longer.
package jsonsize

import "unicode/utf8"

// runeLen is what encoding/json writes for r (size bytes in the text),
// counted a little high: any control character as six.
func runeLen(r rune, size int) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029' || r == utf8.RuneError && size == 1:
		return 6
	}
	return size
}

// Len is the length of s as a JSON string, quotes included.
func Len(s string) int {
	n := 2
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		n += runeLen(r, size)
		s = s[size:]
	}
	return n
}

// Prefix is the longest prefix of s, cut between runes, whose JSON string
// takes at most limit bytes.
func Prefix(s string, limit int) string {
	n := 2
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if n += runeLen(r, size); n > limit {
			return s[:i]
		}
		i += size
	}
	return s
}
