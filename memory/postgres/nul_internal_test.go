package postgres

import "testing"

func TestHasNUL(t *testing.T) {
	for in, want := range map[string]bool{
		`"a\u0000b"`:         true,
		`"\\u0000"`:          false, // an escaped backslash, then text
		`"\\\u0000"`:         true,
		`"u0000"`:            false,
		`{"k":"x"}`:          false,
		`"\u00001"`:          true,
		`"\\\\u0000 \u0000"`: true,
	} {
		if got := hasNUL([]byte(in)); got != want {
			t.Errorf("hasNUL(%s) = %v, want %v", in, got, want)
		}
	}
}
