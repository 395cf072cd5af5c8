package webui

import (
	"net/url"
	"path"
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

// FuzzReturnTo: wherever a sign-in link's next points, signing in goes to
// a page of this console (resolved against it, the same host and a path
// under /ui/, with nothing a browser reads as a slash or drops), either
// next itself or the runs list.
func FuzzReturnTo(f *testing.F) {
	for _, seed := range []string{"", "/ui/runs/run_1?x=1", "//evil.example", "/\\evil", "https://e.example/ui/", "/ui/../x",
		"/ui/%2e%2e/x", "/ui/\tx", "javascript:alert(1)", "/ui/runs#x", "/ui//evil"} {
		f.Add(seed)
	}
	base, _ := url.Parse("http://console.example/ui/signin")
	f.Fuzz(func(t *testing.T, next string) {
		got := returnTo(next)
		if got != next && got != "/ui/runs" {
			t.Fatalf("%q: %q", next, got)
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("%q: %q does not parse: %v", next, got, err)
		}
		to := base.ResolveReference(u)
		if to.Host != base.Host || !strings.HasPrefix(to.Path, Prefix) || path.Clean(to.Path) != to.Path ||
			strings.ContainsFunc(got, func(r rune) bool { return r == '\\' || r < 0x20 || r == 0x7f }) {
			t.Fatalf("%q: goes to %q (%s)", next, got, to)
		}
	})
}
