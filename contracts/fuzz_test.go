package contracts

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/theory/jsonpath"
)

// Seeds beyond testdata/fuzz/*: the plans of testdata/plans.
func FuzzParsePlan(f *testing.F) {
	for _, name := range []string{"scenario1.json", "scenario2.json"} {
		f.Add(readPlan(f, name))
	}
	cat := testCatalog(f)
	f.Fuzz(func(t *testing.T, text []byte) {
		p, err := ParsePlan(text)
		if err != nil {
			if c := CodeOf(err); c.Category() != "validation" {
				t.Fatalf("non-validation code %d: %v", c, err)
			}
			return
		}
		// ValidatePlan trusts this: it does not validate a parsed plan again.
		if data, err := encodePlan(p); err != nil || string(data) != string(p.parsed) {
			t.Fatalf("a parsed plan's encoding is not the one it keeps: %v", err)
		}
		if err := validateEncoded(p.parsed); err != nil {
			t.Fatalf("a parsed plan does not re-validate: %v", err)
		}
		g, err := CheckPlan(p, cat, CheckOptions{InitialState: []string{"summary"}})
		if err != nil {
			if c := CodeOf(err); c.Category() != "validation" {
				t.Fatalf("non-validation code %d: %v", c, err)
			}
			return
		}
		// Every action sits in exactly one level, after all it waits for.
		levelOf := map[string]int{}
		for l, ids := range g.Levels {
			for _, id := range ids {
				if _, dup := levelOf[id]; dup {
					t.Fatalf("%s in two levels", id)
				}
				levelOf[id] = l
			}
		}
		if len(levelOf) != len(p.Actions) {
			t.Fatalf("%d actions, %d placed", len(p.Actions), len(levelOf))
		}
		for id, deps := range g.Deps {
			for _, d := range deps {
				if levelOf[d] >= levelOf[id] {
					t.Fatalf("%s waits for %s but is not after it", id, d)
				}
			}
		}
		if m := g.Mermaid(p); !strings.HasPrefix(m, "flowchart TD\n") {
			t.Fatalf("mermaid: %q", m)
		}
	})
}

func FuzzExtractJSON(f *testing.F) {
	f.Add("```json\n{\"a\":1}\n```")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ExtractJSON(text)
		if err != nil {
			if CodeOf(err) != CodeInvalidJSON || got != nil {
				t.Fatalf("got %q, %v", got, err)
			}
			return
		}
		if !json.Valid(got) || got[0] != '{' {
			t.Fatalf("not a JSON object: %q", got)
		}
		if !strings.Contains(text, string(got)) {
			t.Fatalf("%q is not taken from the text", got)
		}
		if _, err := DecodeJSON(got); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzTakeMissing checks each path TakeMissing reports, for a value
// MarkMissing marked, with an RFC 9535 parser on the value before: it
// must select exactly one "MISSING" string, and none may be unreported;
// no JSON text decodes to a marker.
func FuzzTakeMissing(f *testing.F) {
	f.Add([]byte(`{"a":"MISSING","b":[{"c":"MISSING"}],"odd key":"MISSING"}`))
	f.Add([]byte(`{"a":"MISS\u0049NG","b":"MISSING "}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeJSON(data)
		if err != nil {
			return
		}
		if TakeMissing(v) != nil {
			t.Fatal("decoded JSON holds a marker")
		}
		marked, _ := DecodeJSON(data)
		paths := TakeMissing(MarkMissing(marked))
		if !slices.IsSorted(paths) {
			t.Fatalf("unsorted: %q", paths)
		}
		for _, p := range paths {
			q, err := jsonpath.Parse(p)
			if err != nil {
				t.Fatalf("%q is not RFC 9535: %v", p, err)
			}
			if nodes := q.Select(v); len(nodes) != 1 || nodes[0] != MissingWord {
				t.Fatalf("%q selects %v", p, nodes)
			}
		}
		if want := countMissing(v); len(paths) != want {
			t.Fatalf("%d paths for %d MISSING values", len(paths), want)
		}
	})
}

func countMissing(v any) int {
	switch v := v.(type) {
	case string:
		if v == MissingWord {
			return 1
		}
	case map[string]any:
		n := 0
		for _, c := range v {
			n += countMissing(c)
		}
		return n
	case []any:
		n := 0
		for _, c := range v {
			n += countMissing(c)
		}
		return n
	}
	return 0
}

func FuzzParseCriterion(f *testing.F) {
	f.Add("len(rows) >= 1")
	state := map[string]any{"page_url": "u", "rows": []any{1, 2}, "n": json.Number("2"), "nil": nil}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCriterion(s)
		if err != nil {
			if CodeOf(err) != CodeInvalidInput {
				t.Fatal(err)
			}
			return
		}
		ok, why := c.Check(state)
		if why == "" {
			t.Fatal("no reason")
		}
		again, err := ParseCriterion(c.Source)
		if err != nil {
			t.Fatalf("%q does not re-parse: %v", c.Source, err)
		}
		if ok2, _ := again.Check(state); ok2 != ok {
			t.Fatalf("%q checks differently after re-parsing", s)
		}
	})
}

// FuzzConcealer: whatever a tool answers, no secret value the call was
// given (one the Concealer looks for, not itself part of the marker) is
// left in the concealed result's strings or the concealed error's text.
func FuzzConcealer(f *testing.F) {
	f.Add([]byte(`{"password":"hunter22","pin":4711,"db":{"k":["s3cret"]}}`), []byte(`{"said":"password hunter22 pin 4711","hunter22":["s3cret"]}`))
	f.Add([]byte(`{"password":"a\"b\\c\u00e9d"}`), []byte(`["a\"b\\c\u00e9d!"]`))
	f.Fuzz(func(t *testing.T, payload, result []byte) {
		secret := []string{"password", "pin", "db"}
		c := NewConcealer(payload, secret)
		var leaked func(v any) string
		leaked = func(v any) string {
			switch v := v.(type) {
			case string:
				for _, s := range c.values {
					if strings.Contains(v, s) && !strings.Contains(Redacted, s) && !strings.Contains(Redacted, v) {
						return s
					}
				}
			case map[string]any:
				for k, x := range v {
					if s := leaked(k) + leaked(x); s != "" {
						return s
					}
				}
			case []any:
				for _, x := range v {
					if s := leaked(x); s != "" {
						return s
					}
				}
			}
			return ""
		}
		if out, err := DecodeJSON(c.Result(result)); err == nil {
			if s := leaked(out); s != "" {
				t.Fatalf("result %s keeps %q", c.Result(result), s)
			}
		}
		if s := leaked(c.Error(Errorf(CodeToolFailed, "%s", result)).Error()); s != "" {
			t.Fatalf("error keeps %q", s)
		}
	})
}

// FuzzConcealerCut: a stream fed to Cut in pieces of any sizes (each byte
// of sizes one piece's length) shows no value, holds less than the
// longest value between pieces, and shows what Text shows of it whole.
func FuzzConcealerCut(f *testing.F) {
	f.Add("using key sk-live-0123456789 now", []byte{13, 2, 40})
	f.Add("ababababa hunter22hunter22", []byte{1, 1, 1, 3, 5})
	f.Fuzz(func(t *testing.T, text string, sizes []byte) {
		values := []string{"sk-live-0123456789", "hunter22", "abab", "ban"}
		c := Conceal(values...)
		var out strings.Builder
		held, rest := "", text
		for _, n := range sizes {
			n := min(int(n), len(rest))
			var shown string
			shown, held = c.Cut(held + rest[:n])
			out.WriteString(shown)
			rest = rest[n:]
			if len(held) >= len("sk-live-0123456789") {
				t.Fatalf("holds %q", held)
			}
		}
		out.WriteString(c.Text(held + rest))
		for _, v := range values {
			if strings.Contains(out.String(), v) && !strings.Contains(c.Text(text), v) {
				t.Fatalf("%q in pieces %v shows %q: %q", text, sizes, v, out.String())
			}
		}
		if len(sizes) == 0 && out.String() != c.Text(text) {
			t.Fatalf("whole: %q, Text: %q", out.String(), c.Text(text))
		}
	})
}
