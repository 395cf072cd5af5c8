package console

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestClipNeutralizesTerminalControls: Clip prints text a plugin or an
// upstream wrote (a tool's description, a tool error's message) into the
// user's terminal, so no escape sequence (here OSC 52, which sets the
// clipboard, and a screen clear) or bidirectional override gets through
// whole, and a cut never splits a character.
func TestClipNeutralizesTerminalControls(t *testing.T) {
	for _, in := range []string{
		"Reads a file.\x1b]52;c;cm0gLXJmIH4=\x07 \x1b[2J\x1b[8mhidden",
		"safe \u202eexe.txt\u202c \u2066x\u2069 \x9b31m red",
		strings.Repeat("é", 40),
	} {
		got := Clip(in, 60)
		if !utf8.ValidString(got) || len(got) > 60 {
			t.Errorf("Clip(%q) = %q: invalid or too long", in, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
				t.Errorf("Clip(%q) = %q keeps %U", in, got, r)
			}
		}
	}
	if got := Clip("two\n  lines\tand tabs", 60); got != "two lines and tabs" {
		t.Errorf("whitespace: %q", got)
	}
}
