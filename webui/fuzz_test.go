package webui

import (
	"strings"
	"testing"
)

// FuzzParseInputs: template inputs typed into the new-run form either
// parse to one value per non-blank line, keyed by the text before its
// first "=", or are refused with a coded error naming the line; never a
// panic.
func FuzzParseInputs(f *testing.F) {
	for _, seed := range []string{"", "a1.text=hello", "a1.n=42\na2.ok=true\n", "a1.v=[1,{\"x\":null}]", "=x", "noequals", "a.b=\"q\"\r\n  \n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := parseInputs(text)
		lines := 0
		for _, l := range strings.Split(text, "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if err != nil {
			if got != nil || !strings.Contains(err.Error(), "inputs line") {
				t.Fatalf("%q: %v with %v", text, err, got)
			}
			return
		}
		if len(got) > lines {
			t.Fatalf("%q: %d inputs from %d lines", text, len(got), lines)
		}
		for k := range got {
			if k == "" || k != strings.TrimSpace(k) {
				t.Fatalf("%q: key %q", text, k)
			}
		}
	})
}
