package contracts

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Redacted replaces secret values in step records.
const Redacted = "[REDACTED]"

// IsSecretField reports whether a payload's top-level key is one of
// secretFields. Names compare as encoding/json matches a key to a struct
// field, case-insensitively: a Go plugin decodes "API_KEY" or "Api_Key"
// into its api_key field, so each of them carries the secret.
func IsSecretField(secretFields []string, key string) bool {
	for _, f := range secretFields {
		if strings.EqualFold(f, key) {
			return true
		}
	}
	return false
}

// Redact returns payload with its top-level secret fields (IsSecretField)
// replaced by Redacted, so step records and audit trails never hold a
// contract's secret_fields. It never modifies payload. json.RawMessage in
// gives json.RawMessage out; a payload that is not an object is returned
// as is, and one that cannot be read at all becomes Redacted as a whole.
func Redact(payload any, secretFields []string) any {
	if len(secretFields) == 0 {
		return payload
	}
	raw, isRaw := payload.(json.RawMessage)
	v, err := jsonValue(payload)
	if err != nil {
		return Redacted // unreadable: hide it all rather than leak a secret
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return payload
	}
	out := maps.Clone(obj)
	changed := false
	for k := range out {
		if IsSecretField(secretFields, k) {
			out[k] = Redacted
			changed = true
		}
	}
	if !isRaw {
		return out
	}
	if !changed {
		return raw
	}
	data, err := json.Marshal(out)
	if err != nil {
		return Redacted
	}
	return json.RawMessage(data)
}

// secretFields are a contract's secret fields as redaction uses them,
// top-level fields: each listed one — a path ("db.password",
// "$.keys[0].secret") as its first segment, unless the schema has a
// property of that very name, since a nested path would hide nothing —
// and those the input schema marks (schemaSecrets); sorted, once each.
func secretFields(listed []string, props map[string]bool, schema json.RawMessage) []string {
	out := schemaSecrets(schema)
	for _, f := range listed {
		if !props[f] {
			if top := strings.FieldsFunc(strings.TrimLeft(f, "$."), func(r rune) bool { return r == '.' || r == '[' }); len(top) > 0 {
				f = top[0]
			}
		}
		out = append(out, f)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// schemaSecrets are the top-level properties of an input schema that hold
// a value the schema marks writeOnly or format "password" — JSON Schema's
// words for a value that is sent, never shown — at any depth (inside
// objects, array items, combinators, local $refs): a secret nested in a
// field makes the whole field secret, since redaction works on top-level
// fields.
func schemaSecrets(schema json.RawMessage) []string {
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil {
		return nil
	}
	props, _ := root["properties"].(map[string]any)
	var out []string
	for name, p := range props {
		if marksSecret(root, p, map[string]bool{}) {
			out = append(out, name)
		}
	}
	return out
}

// marksSecret reports whether schema v, or any schema inside it, marks its
// value secret; seen guards against $ref cycles.
func marksSecret(root map[string]any, v any, seen map[string]bool) bool {
	switch v := v.(type) {
	case map[string]any:
		if v["writeOnly"] == true || v["format"] == "password" {
			return true
		}
		if ref, ok := v["$ref"].(string); ok && !seen[ref] {
			seen[ref] = true
			if target, ok := localRef(root, ref); ok && marksSecret(root, target, seen) {
				return true
			}
		}
		for _, x := range v {
			if marksSecret(root, x, seen) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if marksSecret(root, x, seen) {
				return true
			}
		}
	}
	return false
}

// localRef resolves a "#/..." JSON pointer within root.
func localRef(root map[string]any, ref string) (any, bool) {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	var cur any = root
	for _, tok := range strings.Split(ptr, "/")[1:] {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// MinConcealed is the shortest secret value a Concealer looks for: a
// shorter one would turn every "a" or "1" of an answer into the marker.
// A configured value shorter than this is not hidden (the host warns).
const MinConcealed = 4

// A Concealer hides the secret values one call was given wherever the
// tool's answer repeats them — an error saying "wrong password hunter2",
// a result echoing its request — so that no record, log, trace or model
// prompt made from the answer holds them.
type Concealer struct{ values []string }

// Conceal is a Concealer of values (those of at least MinConcealed
// characters): a token, a key, a configured variable's value.
func Conceal(values ...string) Concealer {
	var c Concealer
	for _, v := range values {
		if v != Redacted && utf8.RuneCountInString(v) >= MinConcealed {
			c.values = append(c.values, v)
		}
	}
	return c
}

// ConcealEnv is a Concealer of a configured environment's values (a
// plugin's or an upstream's env, which config show hides too), but for
// absolute paths: a root directory is no credential, and hiding it would
// blank every path a plugin logs.
func ConcealEnv(env map[string]string) Concealer {
	var values []string
	for _, v := range env {
		if !filepath.IsAbs(v) {
			values = append(values, v)
		}
	}
	return Conceal(values...)
}

// NewConcealer conceals the values in payload's secret fields (strings,
// and numbers as written, at any depth inside the field).
func NewConcealer(payload json.RawMessage, secretFields []string) Concealer {
	if len(secretFields) == 0 { // before obj, which escapes: no allocation on every call of a tool without secrets
		return Concealer{}
	}
	var obj map[string]any
	if json.Unmarshal(payload, &obj) != nil {
		return Concealer{}
	}
	var values []string
	var collect func(v any)
	collect = func(v any) {
		switch v := v.(type) {
		case string:
			values = append(values, v)
		case float64:
			collect(strconv.FormatFloat(v, 'f', -1, 64))
		case map[string]any:
			for _, x := range v {
				collect(x)
			}
		case []any:
			for _, x := range v {
				collect(x)
			}
		}
	}
	for k, v := range obj {
		if IsSecretField(secretFields, k) {
			collect(v)
		}
	}
	return Conceal(values...)
}

// Text is s with every secret value replaced by Redacted.
func (c Concealer) Text(s string) string {
	for _, v := range c.values {
		s = strings.ReplaceAll(s, v, Redacted)
	}
	return s
}

// Cut splits text, the start of a stream not shown yet (a plugin's
// stderr line, say), into what can be shown now, concealed, and what to
// hold until more of the stream arrives: no value straddles the two, so a
// value written in two pieces is hidden like one written whole. What is
// held is shorter than the longest value, so a line cut because it grew
// past its bound keeps a bounded tail.
func (c Concealer) Cut(text string) (shown, held string) {
	longest := 0
	for _, v := range c.values {
		longest = max(longest, len(v))
	}
	// A value that may go on past text starts in its last longest-1 bytes.
	cut := max(len(text)-max(longest-1, 0), 0)
	for moved := true; moved; {
		moved = false
		for _, v := range c.values {
			// Every occurrence in this window starts before cut and ends
			// after it: the cut moves to its end (occurrences of one value
			// that overlap are hidden as Text hides them).
			lo, hi := max(cut-len(v)+1, 0), min(cut+len(v)-1, len(text))
			if lo < hi {
				if i := strings.Index(text[lo:hi], v); i >= 0 {
					cut, moved = lo+i+len(v), true
				}
			}
		}
	}
	return c.Text(text[:cut]), text[cut:]
}

// value is v with the secret values hidden in its strings (keys
// included); changed says whether any was.
func (c Concealer) value(v any) (out any, changed bool) {
	switch v := v.(type) {
	case string:
		s := c.Text(v)
		return s, s != v
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			x, ch := c.value(x)
			k2 := c.Text(k)
			m[k2] = x
			changed = changed || ch || k2 != k
		}
		return m, changed
	case []any:
		a := make([]any, len(v))
		for i, x := range v {
			var ch bool
			a[i], ch = c.value(x)
			changed = changed || ch
		}
		return a, changed
	}
	return v, false
}

// Result is raw with the secret values hidden; raw itself when it holds
// none (or is not JSON, which the caller refuses anyway).
func (c Concealer) Result(raw json.RawMessage) json.RawMessage {
	if len(c.values) == 0 {
		return raw
	}
	v, err := DecodeJSON(raw)
	if err != nil {
		return raw
	}
	out, changed := c.value(v)
	if !changed {
		return raw
	}
	data, err := json.Marshal(out)
	if err != nil {
		return raw
	}
	return data
}

// Error is err with the secret values hidden in its message and details.
// An error that repeats one becomes an *Error without its cause (whose
// text repeats it too), keeping its code and retryability; one that does
// not is returned as it is.
func (c Concealer) Error(err error) error {
	if err == nil || len(c.values) == 0 {
		return err
	}
	e := AsError(err)
	msg := c.Text(e.Message)
	details, changed := c.value(detailsJSON(e.Details))
	if msg == e.Message && !changed && c.Text(err.Error()) == err.Error() {
		return err
	}
	out := &Error{Code: e.Code, Message: msg, Retryable: e.Retryable}
	if d, ok := details.(map[string]any); ok && len(d) > 0 {
		out.Details = d
	}
	return out
}

// detailsJSON is details as plain JSON values (what a record stores),
// so that value reaches every string in them.
func detailsJSON(details map[string]any) any {
	if v, err := jsonValue(details); err == nil {
		return v
	}
	return map[string]any(details)
}
