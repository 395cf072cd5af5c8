package contracts

// MaxJSONDepth is how deeply the JSON Ordo reads may nest arrays and
// objects: MCP messages, plans, payloads, tool results and model answers.
// encoding/json alone accepts 10,000 levels, and values that deep cost
// thousands of times their size in memory as they are decoded, walked and
// validated; no real plan or payload comes near 64.
const MaxJSONDepth = 64

// MaxMessageBytes bounds one message a tool source sends Ordo: a plugin's
// answer (a gRPC message) and an upstream MCP server's (a stdio line, an
// HTTP body, an event); and a model endpoint's answer. A larger one is
// refused as it is read, so no plugin, server or endpoint can make Ordo
// hold any amount of memory. It is four times gRPC's default bound: MCP
// results carry files and images inline.
const MaxMessageBytes = 16 << 20

// CheckJSONDepth refuses, with CodeJSONTooDeep naming limit and the byte
// offset, JSON text whose arrays and objects nest more than limit levels
// (the top-level object or array is level 1). It builds no values and keeps
// no stack, so it is safe to run on untrusted bytes before any decoder. It
// only follows brackets outside strings: it does not validate the text,
// the decoder after it does.
func CheckJSONDepth(data []byte, limit int) error {
	depth, str := 0, jsonString{}
	for i, c := range data {
		if !str.outside(c) {
			continue
		}
		switch {
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

// jsonString follows JSON text byte by byte for the bracket counters here
// (CheckJSONDepth, matchBrace): whether a byte is inside a string.
type jsonString struct{ in, escaped bool }

// outside takes the next byte c and says whether it stands outside every
// string (a quote that opens or closes one does not).
func (s *jsonString) outside(c byte) bool {
	switch {
	case s.escaped:
		s.escaped = false
	case s.in && c == '\\':
		s.escaped = true
	case s.in && c == '"':
		s.in = false
	case s.in:
	case c == '"':
		s.in = true
	default:
		return true
	}
	return false
}
