package contracts

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
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
	if s.types != nil && !s.typed(v) {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		return s.object(v)
	case []any:
		if s.items != nil {
			for _, x := range v {
				if !s.items.valid(x) {
					return false
				}
			}
		}
		return true
	case string:
		if s.minLength > 0 || s.maxLength >= 0 {
			n := utf8.RuneCountInString(v)
			if n < s.minLength || s.maxLength >= 0 && n > s.maxLength {
				return false
			}
		}
		return s.enum == nil || slices.Contains(s.enum, v)
	case json.Number, bool, nil:
		return s.enum == nil
	}
	return false // a Go value jsonschema reads its own way
}

func (s *fastSchema) object(m map[string]any) bool {
	for _, r := range s.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	for k, x := range m {
		p, ok := s.props[k]
		switch {
		case ok:
		case s.closed:
			return false
		case s.extra != nil:
			p = s.extra
		default:
			continue
		}
		if !p.valid(x) {
			return false
		}
	}
	return s.enum == nil
}

// typed reports whether v is surely of one of s.types. An integer is a
// number literal without fraction or exponent ("1.0" is one too, for
// jsonschema: not sure here).
func (s *fastSchema) typed(v any) bool {
	var t string
	switch v := v.(type) {
	case map[string]any:
		t = "object"
	case []any:
		t = "array"
	case string:
		t = "string"
	case bool:
		t = "boolean"
	case nil:
		t = "null"
	case json.Number:
		if slices.Contains(s.types, "number") {
			return true
		}
		t = "integer"
		for i := 0; i < len(v); i++ {
			if c := v[i]; (c < '0' || c > '9') && !(i == 0 && c == '-') {
				return false
			}
		}
	default:
		return false
	}
	return slices.Contains(s.types, t)
}
