package contracts

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

// nested is JSON text nesting arrays and objects depth levels deep.
func nested(depth int) []byte {
	var open, close []byte
	for i := range depth {
		if i%2 == 0 {
			open, close = append(open, `{"k":`...), append(close, '}')
		} else {
			open, close = append(open, '['), append(close, ']')
		}
	}
	slices.Reverse(close)
	return append(append(open, '1'), close...)
}

func TestCheckJSONDepth(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		limit int
		ok    bool
	}{
		{"scalar", `1`, 0, true},
		{"at the limit", string(nested(3)), 3, true},
		{"one over", string(nested(4)), 3, false},
		{"brackets in strings do not count", `{"a":"[[[[{{{{"}`, 1, true},
		{"escaped quote keeps the string open", `["\"[[[["]`, 1, true},
		{"escaped backslash closes it", `["\\",[[]]]`, 2, false},
		{"siblings do not add up", `[[],[],[],{}]`, 2, true},
		{"stray closers do not lend depth", `]]]]}}[[`, 2, true},
	} {
		err := CheckJSONDepth([]byte(tc.text), tc.limit)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %s limit %d: %v", tc.name, tc.text, tc.limit, err)
		}
	}
}

// TestDecodeJSONRefusesDeepText: the refusal names the limit and where, and
// comes before decoding (encoding/json would have accepted 10,000 levels).
func TestDecodeJSONRefusesDeepText(t *testing.T) {
	if _, err := DecodeJSON(nested(MaxJSONDepth)); err != nil {
		t.Fatalf("%d levels: %v", MaxJSONDepth, err)
	}
	for _, depth := range []int{MaxJSONDepth + 1, 9_000} {
		_, err := DecodeJSON(nested(depth))
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeJSONTooDeep || e.Details["limit"] != MaxJSONDepth ||
			!strings.Contains(e.Message, "64 levels") {
			t.Fatalf("%d levels: %v", depth, err)
		}
		if off := e.Details["offset"].(int); off >= len(nested(depth)) || nested(depth)[off] != "{["[MaxJSONDepth%2] {
			t.Errorf("offset %d does not point at the bracket over the limit", off)
		}
	}
	// Tool schemas are JSON from plugins and upstreams too.
	deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"items":`, 70) + `{}` + strings.Repeat("}", 70) + `}}`
	_, err := NewTool(Contract{Tool: "x.y", Service: "x", Description: "d", RiskLevel: RiskRead, InputSchema: json.RawMessage(deep), OutputSchema: json.RawMessage(`{}`)})
	if !errors.Is(err, &Error{Code: CodeInvalidContract}) || !strings.Contains(err.Error(), "deeper than 64") {
		t.Errorf("deep schema: %v", err)
	}
}

// TestCheckJSONDepthAllocatesNothing: the check keeps no stack, whatever the depth.
func TestCheckJSONDepthAllocatesNothing(t *testing.T) {
	text := nested(9_000)
	if n := testing.AllocsPerRun(10, func() { _ = CheckJSONDepth(text, 10_000) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// FuzzCheckJSONDepth compares the check with the depth encoding/json's
// tokenizer sees, on every valid text, at a few limits.
func FuzzCheckJSONDepth(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"]}"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, valid := tokenDepth(data)
		for _, limit := range []int{0, 1, 2, 3, 8} {
			err := CheckJSONDepth(data, limit)
			if err != nil && CodeOf(err) != CodeJSONTooDeep {
				t.Fatalf("code %d: %v", CodeOf(err), err)
			}
			if valid && (err == nil) != (want <= limit) {
				t.Fatalf("depth %d, limit %d: %v", want, limit, err)
			}
		}
	})
}

// tokenDepth is the deepest nesting of one valid JSON text, and whether it
// is valid.
func tokenDepth(data []byte) (int, bool) {
	if !json.Valid(data) {
		return 0, false
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return deepest, true
		}
		if err != nil {
			return 0, false
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}
