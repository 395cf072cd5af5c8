package contracts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Missing marks, in a payload being built (decoded JSON: map[string]any),
// a value nobody has given yet: a required field nothing binds, or one a
// model said it could not find. It is a Go value no JSON text decodes to,
// so no tool result, bound state or person's answer can hold it whatever
// its text: a result that is the string "MISSING" is data, passed on as
// it is. TakeMissing lists and removes the markers; the payload goes on
// without them and the paths go to the person asked (input_required).
var Missing any = missingValue{}

type missingValue struct{}

// MarshalJSON writes the marker as a model wrote it, MissingWord: a payload
// still holding one is shown to a model (the filler's bound payload) or a
// person as the word it knows, not as {} that could be sent back as data.
// Decoding gives the string back, never the marker.
func (missingValue) MarshalJSON() ([]byte, error) { return []byte(`"` + MissingWord + `"`), nil }

// MissingWord is how a model (the planner in a plan's literal inputs, the
// payload filler in its answer) writes a value it does not know, its
// answer being text; MarkMissing reads it as Missing.
const MissingWord = "MISSING"

// MaxExtractBytes bounds ExtractJSON's input; the prose scan is quadratic
// in the worst case and no plan comes near this size.
const MaxExtractBytes = 1 << 20

// DecodeJSON decodes exactly one JSON value with json.Number numbers, the
// form jsonschema validates without losing precision. Trailing data is an
// error: a second value means the text was not what we think it is. Text
// nested deeper than MaxJSONDepth is refused before anything is decoded.
func DecodeJSON(data []byte) (any, error) {
	if err := CheckJSONDepth(data, MaxJSONDepth); err != nil {
		return nil, err
	}
	if v, ok := decodeFast(data); ok {
		return v, nil
	}
	return decodeStd(data)
}

// decodeStd is DecodeJSON by encoding/json: the reference decodeFast must
// agree with, and the one that explains what is wrong with bad text.
func decodeStd(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		e := Errorf(CodeInvalidJSON, "invalid JSON: %w", err)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			e = e.With("offset", se.Offset)
		}
		return nil, e
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Errorf(CodeInvalidJSON, "invalid JSON: data after the top-level value").
			With("offset", dec.InputOffset())
	}
	return v, nil
}

var fence = regexp.MustCompile("(?s)```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```")

// ExtractJSON returns the one JSON object in an LLM's answer: the whole
// text, the content of a fenced block, or a balanced object inside prose.
// It never guesses: no object, or several different ones, is an error.
func ExtractJSON(text string) ([]byte, error) {
	if len(text) > MaxExtractBytes {
		return nil, Errorf(CodeInvalidJSON, "text of %d bytes exceeds %d", len(text), MaxExtractBytes).
			With("size", len(text))
	}
	trimmed := strings.TrimSpace(strings.TrimPrefix(text, "\uFEFF"))
	if isObject(trimmed) {
		return []byte(trimmed), nil
	}
	var fenced []string
	for _, m := range fence.FindAllStringSubmatch(text, -1) {
		if body := strings.TrimSpace(m[1]); isObject(body) {
			fenced = append(fenced, body)
		}
	}
	if len(fenced) > 0 {
		return single(fenced, "fenced blocks")
	}
	return single(objectsInProse(text), "the text")
}

func single(candidates []string, where string) ([]byte, error) {
	candidates = slices.Compact(candidates)
	switch len(candidates) {
	case 0:
		return nil, Errorf(CodeInvalidJSON, "no JSON object in %s", where)
	case 1:
		return []byte(candidates[0]), nil
	}
	return nil, Errorf(CodeInvalidJSON, "%d different JSON objects in %s; refusing to pick one", len(candidates), where).
		With("count", len(candidates))
}

func isObject(s string) bool {
	return strings.HasPrefix(s, "{") && json.Valid([]byte(s))
}

// objectsInProse finds the outermost valid JSON objects in text: from each
// '{' it scans to the matching '}' (string-aware), keeps the span if it is
// valid JSON, and resumes after it either way, so no object is ever taken
// from inside a broken or truncated one.
func objectsInProse(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			continue
		}
		end := matchBrace(text, i)
		if end < 0 {
			break // the rest is inside an unclosed brace, e.g. a truncated answer
		}
		if span := text[i : end+1]; json.Valid([]byte(span)) {
			out = append(out, span)
		}
		i = end // never take an object from inside a broken one
	}
	return out
}

// matchBrace returns the index of the '}' closing the '{' at start, or -1.
func matchBrace(text string, start int) int {
	depth, str := 0, jsonString{}
	for j := start; j < len(text); j++ {
		if !str.outside(text[j]) {
			continue
		}
		switch text[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// MarkMissing replaces every string equal to MissingWord in v, a model's
// words decoded (map[string]any, []any, scalars), by Missing, in place,
// and returns v (Missing when v itself is the word).
func MarkMissing(v any) any {
	switch x := v.(type) {
	case string:
		if x == MissingWord {
			return Missing
		}
	case map[string]any:
		for k, c := range x {
			x[k] = MarkMissing(c)
		}
	case []any:
		for i, c := range x {
			x[i] = MarkMissing(c)
		}
	}
	return v
}

// TakeMissing removes the Missing markers from v, in place (an object
// loses the member, an array holds null in its place), and returns their
// paths, RFC 9535 style ($.a.b[0], or $['odd key'] where a name is not an
// identifier), sorted; v itself Missing is "$".
func TakeMissing(v any) []string {
	var out []string
	var walk func(path string, v any) bool
	walk = func(path string, v any) bool {
		switch x := v.(type) {
		case missingValue:
			out = append(out, path)
			return true
		case map[string]any:
			for k, c := range x {
				if walk(path+pathName(k), c) {
					delete(x, k)
				}
			}
		case []any:
			for i, c := range x {
				if walk(path+"["+strconv.Itoa(i)+"]", c) {
					x[i] = nil
				}
			}
		}
		return false
	}
	walk("$", v)
	slices.Sort(out)
	return out
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// pathName is one member-name segment: .name for identifiers, else the
// bracketed, single-quoted form of RFC 9535 normalized paths.
func pathName(k string) string {
	if identifier.MatchString(k) {
		return "." + k
	}
	var sb strings.Builder
	sb.WriteString("['")
	for _, r := range k {
		switch {
		case r == '\'':
			sb.WriteString(`\'`)
		case r == '\\':
			sb.WriteString(`\\`)
		case r < 0x20:
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteString("']")
	return sb.String()
}

// jsonValue turns v into the JSON-like form that jsonschema and jsonpath
// read (maps, slices, json.Number, ...). json.RawMessage and []byte are JSON
// text; other Go values (structs, typed maps) round-trip through JSON.
func jsonValue(v any) (any, error) {
	switch t := v.(type) {
	case json.RawMessage:
		return DecodeJSON(t)
	case []byte:
		return DecodeJSON(t)
	}
	if jsonLike(v) {
		return v, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, Errorf(CodeInvalidInput, "value is not JSON-encodable: %w", err)
	}
	return DecodeJSON(data)
}

func jsonLike(v any) bool {
	switch t := v.(type) {
	case nil, bool, string, json.Number, float64, float32,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return true
	case map[string]any:
		for _, c := range t {
			if !jsonLike(c) {
				return false
			}
		}
		return true
	case []any:
		for _, c := range t {
			if !jsonLike(c) {
				return false
			}
		}
		return true
	}
	return false
}
