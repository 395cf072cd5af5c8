package agent

import (
	"strings"

	"github.com/ordo-run/ordo/contracts"
)

// An input_bindings field is a payload path: "text" sets a top-level
// field, "values.page_url" sets page_url inside the object payload.values
// (created when absent, merged with a literal input of the same name).
// Paths name object keys only; array elements are not addressable.

// checkBindingPath refuses a path with an empty segment ("values.",
// ".x", "a..b") or more segments than a payload may nest
// (pathTooDeep), naming the action and the field.
func checkBindingPath(actionID, path string) error {
	if pathTooDeep(path) {
		return contracts.Errorf(contracts.CodeInvalidInput, "action %s: input_bindings field %q nests deeper than %d levels", actionID, shortPath(path), contracts.MaxJSONDepth).
			With("action", actionID).With("field", "input_bindings").With("path", shortPath(path)).With("limit", contracts.MaxJSONDepth)
	}
	for _, seg := range strings.Split(path, ".") {
		if seg == "" {
			return contracts.Errorf(contracts.CodeInvalidInput, "action %s: input_bindings field %q has an empty path segment", actionID, path).
				With("action", actionID).With("field", "input_bindings").With("path", path)
		}
	}
	return nil
}

// pathTooDeep says whether a dotted payload path (an input binding's
// field, an answer's or a critic override's "$.a.b") names more than
// contracts.MaxJSONDepth levels: it could only build a payload every call
// refuses, and past encoding/json's 10,000 levels one that no checkpoint
// can encode, leaving the run stuck at its last one.
func pathTooDeep(path string) bool { return strings.Count(path, ".") >= contracts.MaxJSONDepth }

// shortPath is path cut to 200 bytes for an error's message and details.
func shortPath(path string) string {
	if len(path) <= 200 {
		return path
	}
	return strings.ToValidUTF8(path[:200], "") + "…"
}

// setPath sets v at the dotted path in obj, creating objects on the way.
// A segment that holds a non-object value is an error: the binding and
// the literal inputs disagree about the payload's shape.
func setPath(obj map[string]any, path string, v any) error {
	segs := strings.Split(path, ".")
	cur := obj
	for i, seg := range segs[:len(segs)-1] {
		next, ok := cur[seg].(map[string]any)
		if !ok {
			if _, taken := cur[seg]; taken {
				return contracts.Errorf(contracts.CodeInvalidInput, "input_bindings field %q: %s is not an object",
					path, strings.Join(segs[:i+1], ".")).With("field", "input_bindings").With("path", path)
			}
			next = map[string]any{}
			cur[seg] = next
		}
		cur = next
	}
	cur[segs[len(segs)-1]] = v
	return nil
}

// cloneValue deep-copies a decoded JSON value, so binding into a payload
// never writes into the plan's literal inputs or the run's state.
func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}
