package contracts

// MaxJSONDepth is how deeply the JSON Ordo reads may nest arrays and
// objects: MCP messages, plans, payloads, tool results and model answers.
// encoding/json alone accepts 10,000 levels, and values that deep cost
// thousands of times their size in memory as they are decoded, walked and
// validated; no real plan or payload comes near 64.
const MaxJSONDepth = 64

// CheckJSONDepth refuses, with CodeJSONTooDeep naming limit and the byte
// offset, JSON text whose arrays and objects nest more than limit levels
// (the top-level object or array is level 1). It builds no values and keeps
// no stack, so it is safe to run on untrusted bytes before any decoder. It
// only follows brackets outside strings: it does not validate the text,
// the decoder after it does.
func CheckJSONDepth(data []byte, limit int) error {
	depth, inString, escaped := 0, false, false
	for i, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > limit {
				return Errorf(CodeJSONTooDeep, "JSON nests deeper than %d levels (at byte %d)", limit, i).
					With("limit", limit).With("offset", i)
			}
		case (c == '}' || c == ']') && depth > 0:
			depth--
		}
	}
	return nil
}
