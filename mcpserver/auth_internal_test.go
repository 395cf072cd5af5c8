package mcpserver

import (
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

func TestParseTokens(t *testing.T) {
	toks, err := ParseTokens("ada:admin,ops:tok:with:colons:01; bob::plain-token-0123\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != 2 || toks[0].Token != "tok:with:colons:01" || !toks[0].Has(RoleAdmin) || toks[1].User != "bob" || len(toks[1].Roles) != 0 {
		t.Fatalf("%+v", toks)
	}
	long := strings.Repeat("t", MinTokenLength)
	for _, bad := range []string{"nouser", ":admin:" + long, "ada:admin:", "a::" + long + ";b::" + long,
		"ada:admin:" + long[1:], "ada:admin:   short   "} {
		if _, err := ParseTokens(bad); contracts.CodeOf(err) != contracts.CodeInvalidConfig {
			t.Errorf("%q: %v", bad, err)
		}
	}
	table := newTokenTable(toks)
	if id, ok := table.lookup("plain-token-0123"); !ok || id.User != "bob" {
		t.Fatalf("lookup: %v %v", id, ok)
	}
	if _, ok := table.lookup("plain-token-012"); ok {
		t.Fatal("prefix matched")
	}
	if _, ok := table.lookup(""); ok {
		t.Fatal("empty token matched")
	}
}

// FuzzParseTokens: any input parses or is refused with a coded error, and
// every parsed token is found again by the table.
func FuzzParseTokens(f *testing.F) {
	for _, s := range []string{"ada:admin:t1", "ada:admin:token-0123456789ab", "a::b;c:x,y:d\n", ":::", "u:r:" + strings.Repeat("x", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		toks, err := ParseTokens(spec)
		if err != nil {
			if contracts.CodeOf(err) != contracts.CodeInvalidConfig {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		table := newTokenTable(toks)
		for _, tok := range toks {
			if tok.User == "" || tok.Token == "" {
				t.Fatalf("empty user or token: %+v", tok)
			}
			if id, ok := table.lookup(tok.Token); !ok || id.User != tok.User {
				t.Fatalf("token of %q not found", tok.User)
			}
		}
	})
}

func FuzzToolCalls(f *testing.F) {
	for _, s := range []string{`{"method":"tools/call","params":{"name":"x","task":{}}}`, `[{"method":"tools/call","params":{"name":"a"}},{}]`, `[`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_ = toolCalls(readMessages(body))
	})
}
