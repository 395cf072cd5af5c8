package contracts

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeFast decodes well-formed JSON text to exactly what decodeStd
// returns (maps, slices, strings, json.Number, bools, nil), without
// encoding/json's decoder, reader and second scan: about a third of the
// time and allocations for a plugin call's small payloads, decoded once by
// the host on the way in and once on the way out. It answers ok only when
// it is sure; anything else (bad text, a string with a surrogate escape or
// invalid UTF-8, which encoding/json repairs) is left to decodeStd, which
// also says what is wrong. The caller has bounded the depth.
func decodeFast(data []byte) (any, bool) {
	d := fastDecoder{data: data}
	v, ok := d.value()
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(d.data)
}

type fastDecoder struct {
	data []byte
	i    int
}

func (d *fastDecoder) space() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) value() (any, bool) {
	d.space()
	if d.i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		s, ok := d.str()
		return s, ok
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return nil, false
}

func (d *fastDecoder) literal(word string) bool {
	if !bytes.HasPrefix(d.data[d.i:], []byte(word)) {
		return false
	}
	d.i += len(word)
	return true
}

// next reports whether the byte after optional space is c, and takes it.
func (d *fastDecoder) next(c byte) bool {
	d.space()
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *fastDecoder) object() (any, bool) {
	d.i++ // '{'
	m := map[string]any{}
	if d.next('}') {
		return m, true
	}
	for {
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok || !d.next(':') {
			return nil, false
		}
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		m[k] = v // a repeated name: the last value wins, as in encoding/json
		if d.next('}') {
			return m, true
		}
		if !d.next(',') {
			return nil, false
		}
	}
}

func (d *fastDecoder) array() (any, bool) {
	d.i++ // '['
	a := []any{}
	if d.next(']') {
		return a, true
	}
	for {
		v, ok := d.value()
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if d.next(']') {
			return a, true
		}
		if !d.next(',') {
			return nil, false
		}
	}
}

// str reads the string literal at d.i.
func (d *fastDecoder) str() (string, bool) {
	if b, ok := d.rawStr(); ok {
		return string(b), true
	}
	return d.escaped(d.i + 1)
}

// rawStr reads the string literal at d.i if it has no escapes: its bytes,
// in place. False leaves d.i as it was (str tells escapes from bad text).
func (d *fastDecoder) rawStr() ([]byte, bool) {
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.data); j++ {
		switch c := d.data[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(d.data[start:j]) {
				return nil, false
			}
			d.i = j + 1
			return d.data[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// escaped reads a string literal from its first byte, start, that has
// escapes in it.
func (d *fastDecoder) escaped(start int) (string, bool) {
	b := make([]byte, 0, 64)
	for j := start; j < len(d.data); {
		c := d.data[j]
		switch {
		case c == '"':
			if !utf8.Valid(b) { // escapes add whole runes: only raw bytes can break it
				return "", false
			}
			d.i = j + 1
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			j++
			continue
		}
		if j+1 >= len(d.data) {
			return "", false
		}
		switch e := d.data[j+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(d.data[j+2:])
			if !ok || utf16.IsSurrogate(r) { // pairs and lone halves: decodeStd
				return "", false
			}
			b = utf8.AppendRune(b, r)
			j += 4
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape.
func hex4(p []byte) (rune, bool) {
	if len(p) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads a number by JSON's grammar, kept as its text.
func (d *fastDecoder) number() (any, bool) {
	text, ok := d.numberText()
	if !ok {
		return nil, false
	}
	return json.Number(text), true
}

// numberText reads a number by JSON's grammar: its text, in place.
func (d *fastDecoder) numberText() ([]byte, bool) {
	start, j := d.i, d.i
	digits := func() int {
		k := j
		for j < len(d.data) && '0' <= d.data[j] && d.data[j] <= '9' {
			j++
		}
		return j - k
	}
	if d.data[j] == '-' {
		j++
	}
	switch {
	case j < len(d.data) && d.data[j] == '0':
		j++
	case digits() == 0:
		return nil, false
	}
	if j < len(d.data) && d.data[j] == '.' {
		j++
		if digits() == 0 {
			return nil, false
		}
	}
	if j < len(d.data) && (d.data[j] == 'e' || d.data[j] == 'E') {
		j++
		if j < len(d.data) && (d.data[j] == '+' || d.data[j] == '-') {
			j++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	d.i = j
	return d.data[start:j], true
}
