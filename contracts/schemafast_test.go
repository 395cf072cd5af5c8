package contracts

import (
	"encoding/json"
	"strings"
	"testing"
)

// schemaCases are schemas with values: those the fast path must accept
// (fast: true), and values it may refuse, each checked against jsonschema.
var schemaCases = []struct {
	schema, value string
	fast          bool // compileFast handles the schema and accepts the value
}{
	{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`, `{"text":"hi"}`, true},
	{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`, `{"text":"hi","x":1}`, false},
	{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`, `{}`, false},
	{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, `{"text":"hi","x":1}`, true},
	{`{"type":"object","properties":{"text":{"type":"string"}}}`, `{"text":1}`, false},
	{`{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1,"b":-20}`, true},
	{`{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1.5}`, false},
	{`{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1.0}`, false}, // an integer for jsonschema; not sure here
	{`{"type":["string","null"],"minLength":2,"maxLength":3}`, `"한국어"`, true},
	{`{"type":["string","null"],"minLength":2,"maxLength":3}`, `null`, true},
	{`{"type":["string","null"],"minLength":2,"maxLength":3}`, `"한국어 "`, false},
	{`{"type":["string","null"],"minLength":2,"maxLength":3}`, `"a"`, false},
	{`{"type":"array","items":{"type":"number"}}`, `[1,2.5,-3e2]`, true},
	{`{"type":"array","items":{"type":"number"}}`, `[1,"2"]`, false},
	{`{"enum":["a","b"],"description":"one of two","default":"a"}`, `"b"`, true},
	{`{"enum":["a","b"]}`, `"c"`, false},
	{`{"enum":["a","b"]}`, `{}`, false},
	{`{"properties":{"a":{"type":"string"}},"required":["a"]}`, `"not an object"`, true},
	{`{}`, `[{"any":"thing"}]`, true},
	{`true`, `1`, true},
	{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"boolean"}`, `false`, true},
	// Beyond the fast path: jsonschema alone decides.
	{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"integer"}`, `1.0`, false},
	{`{"type":"string","format":"email"}`, `"a@b.c"`, false},
	{`{"type":"string","pattern":"^a"}`, `"ab"`, false},
	{`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, `{"a":"s"}`, false},
	{`{"type":"integer","minimum":1}`, `2`, false},
	{`{"type":"object","properties":{"a":false}}`, `{}`, false},
	{`{"enum":["a",1]}`, `"a"`, false},
}

// TestSchemaFast checks the fast path takes the plain schemas and values
// it is for, decoded and as text, and never accepts what jsonschema
// refuses.
func TestSchemaFast(t *testing.T) {
	for _, c := range schemaCases {
		for _, text := range []bool{false, true} {
			fast, lib := verdicts(t, []byte(c.schema), []byte(c.value), text)
			if fast && !lib {
				t.Errorf("schema %s, value %s (text %v): the fast path accepts what jsonschema refuses", c.schema, c.value, text)
			}
			if fast != c.fast {
				t.Errorf("schema %s, value %s (text %v): fast path says %v, want %v", c.schema, c.value, text, fast, c.fast)
			}
		}
	}
	// Text DecodeJSON refuses, or that it reads otherwise than it looks.
	echo := []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)
	for _, value := range []string{`{"text":"hi"} x`, `{"text":"hi",}`, `{"text":"a\x"}`, "{\"text\":\"a\x01\"}", `{"text":01}`,
		`{"text":"hi","text":1}`, `{"te\u0078t":"hi"}`, "\ufeff{\"text\":\"hi\"}", `{"text":"hi"`, strings.Repeat("[", 65) + strings.Repeat("]", 65)} {
		if fast, lib := verdicts(t, echo, []byte(value), true); fast {
			t.Errorf("the fast path accepts the text %q (jsonschema: %v)", value, lib)
		}
	}
}

// FuzzSchemaFast holds the fast path to jsonschema: whatever value it
// accepts under whatever schema, decoded or as text, DecodeJSON decodes and
// jsonschema accepts.
func FuzzSchemaFast(f *testing.F) {
	for _, c := range schemaCases {
		f.Add([]byte(c.schema), []byte(c.value))
	}
	f.Fuzz(func(t *testing.T, schema, value []byte) {
		for _, text := range []bool{false, true} {
			if fast, lib := verdicts(t, schema, value, text); fast && !lib {
				t.Fatalf("schema %s, value %s (text %v): the fast path accepts what jsonschema refuses", schema, value, text)
			}
		}
	})
}

// verdicts validates value under schema by the fast path (on the decoded
// value, or on the text) and by DecodeJSON and jsonschema (false when
// either refuses). A schema that does not compile gets no verdicts.
func verdicts(t *testing.T, schema, value []byte, text bool) (fast, lib bool) {
	t.Helper()
	sch, err := compileSchema("ordo:///test.json", schema)
	if err != nil {
		return false, false
	}
	fs := compileFast(schema)
	v, err := DecodeJSON(value)
	if text {
		fast = fs.accepts(json.RawMessage(value))
	} else if err == nil {
		fast = fs.accepts(v)
	}
	return fast, err == nil && sch.Validate(v) == nil
}
