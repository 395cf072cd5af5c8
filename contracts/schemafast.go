package contracts

import (
	"encoding/json"
	"slices"
)

// fastSchema is a compiled form of the plain schemas most tools declare
// (types, properties, required, additionalProperties, items, string
// lengths, string enums), which tells a valid value in one walk without
// jsonschema's bookkeeping of evaluated properties and its allocations:
// about half of the host's own time on a plugin call went to the two
// validations (issue 14). It answers only "surely valid"; anything else
// (a violation, a value it is not sure of) goes to jsonschema, the
// reference, which also says what is wrong. A schema with any other
// keyword gets no fastSchema at all.
type fastSchema struct {
	any       bool // the schema true or {}: every value
	types     []string
	props     map[string]*fastSchema
	required  []string
	closed    bool        // additionalProperties: false
	extra     *fastSchema // additionalProperties as a schema
	items     *fastSchema
	minLength int
	maxLength int // -1: none
	enum      []string
}

// fastKeywords are the keywords compileFast understands; the annotations
// among them change no verdict.
var fastKeywords = []string{"type", "properties", "required", "additionalProperties", "items", "minLength",
	"maxLength", "enum", "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"}

var fastTypes = []string{"object", "array", "string", "integer", "number", "boolean", "null"}

// compileFast returns the fastSchema of a schema document, or nil when it
// uses anything beyond fastKeywords (or a $schema other than the default
// draft 2020-12).
func compileFast(raw []byte) *fastSchema {
	doc, err := DecodeJSON(raw)
	if err != nil {
		return nil
	}
	if m, ok := doc.(map[string]any); ok && m["$schema"] != nil {
		if m["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			return nil
		}
		delete(m, "$schema")
	}
	return fastNode(doc)
}

func fastNode(doc any) *fastSchema {
	if doc == true {
		return &fastSchema{any: true}
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	s := &fastSchema{maxLength: -1}
	for k, v := range m {
		if !slices.Contains(fastKeywords, k) {
			return nil
		}
		var ok bool
		switch k {
		case "type":
			ok = s.setTypes(v)
		case "properties":
			ok = s.setProps(v)
		case "required":
			s.required, ok = stringList(v)
		case "additionalProperties":
			if v == false {
				s.closed, ok = true, true
			} else {
				s.extra = fastNode(v)
				ok = s.extra != nil
			}
		case "items":
			s.items = fastNode(v)
			ok = s.items != nil
		case "minLength":
			s.minLength, ok = count(v)
		case "maxLength":
			s.maxLength, ok = count(v)
		case "enum":
			s.enum, ok = stringList(v)
			ok = ok && len(s.enum) > 0
		default: // an annotation
			ok = true
		}
		if !ok {
			return nil
		}
	}
	s.any = len(m) == 0
	return s
}

func (s *fastSchema) setTypes(v any) bool {
	if t, ok := v.(string); ok {
		v = []any{t}
	}
	types, ok := stringList(v)
	if !ok || len(types) == 0 {
		return false
	}
	for _, t := range types {
		if !slices.Contains(fastTypes, t) {
			return false
		}
	}
	s.types = types
	return true
}

func (s *fastSchema) setProps(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	s.props = make(map[string]*fastSchema, len(m))
	for name, p := range m {
		if s.props[name] = fastNode(p); s.props[name] == nil {
			return false
		}
	}
	return true
}

// stringList reads a JSON array of strings.
func stringList(v any) ([]string, bool) {
	a, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(a))
	for _, x := range a {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// count reads a non-negative integer literal.
func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil || i < 0 || int64(int(i)) != i {
		return 0, false
	}
	return int(i), true
}

// valid reports whether v, a JSON value as DecodeJSON makes them, surely
// satisfies s. False is "not sure": the caller asks jsonschema.
func (s *fastSchema) valid(v any) bool {
	if s.any {
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		if !s.is("object") || s.enum != nil || !s.hasRequired(func(k string) bool { _, ok := v[k]; return ok }) {
			return false
		}
		for k, x := range v {
			p, ok := s.props[k]
			if !ok {
				p = s.other()
			}
			if p == nil || !p.valid(x) {
				return false
			}
		}
		return true
	case []any:
		if !s.is("array") || s.enum != nil {
			return false
		}
		for _, x := range v {
			if s.items != nil && !s.items.valid(x) {
				return false
			}
		}
		return true
	case string:
		return textOK(s, v)
	case json.Number:
		return numberOK(s, v)
	case bool:
		return s.is("boolean") && s.enum == nil
	case nil:
		return s.is("null") && s.enum == nil
	}
	return false // a Go value jsonschema reads its own way
}

// accepts reports whether v surely satisfies s (nil: not known); JSON
// text is read in place.
func (s *fastSchema) accepts(v any) bool {
	if s == nil {
		return false
	}
	switch t := v.(type) {
	case json.RawMessage:
		return s.validJSON(t)
	case []byte:
		return s.validJSON(t)
	}
	return s.valid(v)
}

// validJSON is valid for JSON text that DecodeJSON takes, read in place:
// no value is built, so checking a payload or a result the host passes on
// as text allocates nothing.
func (s *fastSchema) validJSON(data []byte) bool {
	if CheckJSONDepth(data, MaxJSONDepth) != nil {
		return false
	}
	d := fastDecoder{data: data}
	if !s.scan(&d) {
		return false
	}
	d.space()
	return d.i == len(d.data)
}

// scan reads the value at d.i and reports whether it surely satisfies s.
func (s *fastSchema) scan(d *fastDecoder) bool {
	d.space()
	if d.i >= len(d.data) {
		return false
	}
	if s.any {
		_, ok := d.value()
		return ok
	}
	switch c := d.data[d.i]; {
	case c == '{':
		return s.is("object") && s.enum == nil && s.scanObject(d)
	case c == '[':
		if !s.is("array") || s.enum != nil {
			return false
		}
		d.i++
		if d.next(']') {
			return true
		}
		items := s.items
		if items == nil {
			items = anySchema
		}
		for items.scan(d) {
			if d.next(']') {
				return true
			}
			if !d.next(',') {
				return false
			}
		}
		return false
	case c == '"':
		if b, ok := d.rawStr(); ok {
			return textOK(s, b)
		}
		str, ok := d.str()
		return ok && textOK(s, str)
	case c == 't':
		return s.is("boolean") && s.enum == nil && d.literal("true")
	case c == 'f':
		return s.is("boolean") && s.enum == nil && d.literal("false")
	case c == 'n':
		return s.is("null") && s.enum == nil && d.literal("null")
	}
	text, ok := d.numberText()
	return ok && numberOK(s, text)
}

// scanObject reads the object at d.i. A name given twice is checked each
// time (DecodeJSON keeps the last value, which is then checked too).
func (s *fastSchema) scanObject(d *fastDecoder) bool {
	d.i++ // '{'
	if len(s.required) > 64 {
		return false
	}
	var seen uint64 // bit i: required[i] was given
	for first := true; ; first = false {
		if first && d.next('}') {
			break
		}
		d.space()
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return false
		}
		k, ok := d.rawStr()
		if !ok || !d.next(':') {
			return false // an escaped name: not sure
		}
		for i, r := range s.required {
			if r == string(k) {
				seen |= 1 << i
			}
		}
		p, ok := s.props[string(k)]
		if !ok {
			p = s.other()
		}
		if p == nil || !p.scan(d) {
			return false
		}
		if d.next('}') {
			break
		}
		if !d.next(',') {
			return false
		}
	}
	return s.hasRequired(func(k string) bool {
		i := slices.Index(s.required, k)
		return seen&(1<<i) != 0
	})
}

// other is the schema of a member properties does not name, nil when
// additionalProperties refuses it.
func (s *fastSchema) other() *fastSchema {
	switch {
	case s.closed:
		return nil
	case s.extra != nil:
		return s.extra
	}
	return anySchema
}

var anySchema = &fastSchema{any: true}

func (s *fastSchema) hasRequired(has func(string) bool) bool {
	for _, r := range s.required {
		if !has(r) {
			return false
		}
	}
	return true
}

// is reports whether s admits JSON type t.
func (s *fastSchema) is(t string) bool {
	return s.types == nil || slices.Contains(s.types, t)
}

// textOK checks a string (decoded, or raw text without escapes).
func textOK[T ~string | ~[]byte](s *fastSchema, v T) bool {
	if !s.is("string") {
		return false
	}
	if s.minLength > 0 || s.maxLength >= 0 {
		n := 0
		for range string(v) {
			n++
		}
		if n < s.minLength || s.maxLength >= 0 && n > s.maxLength {
			return false
		}
	}
	if s.enum == nil {
		return true
	}
	for _, e := range s.enum {
		if e == string(v) {
			return true
		}
	}
	return false
}

// numberOK checks a number's text. An integer is one without fraction
// or exponent ("1.0" is one too, for jsonschema: not sure here).
func numberOK[T ~string | ~[]byte](s *fastSchema, text T) bool {
	if s.enum != nil {
		return false
	}
	if s.is("number") {
		return true
	}
	if !slices.Contains(s.types, "integer") {
		return false
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return false
		}
	}
	return true
}
