package mcpsource

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
)

// quote is the inverse SplitCommand must honour: single-quote every word.
func quote(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{`npx -y pkg /tmp`, `a 'b c' "d \"e\"" f\ g`, `'`, `"\`, `x\`, ` `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := SplitCommand(line)
		if err != nil {
			if contracts.CodeOf(err) != contracts.CodeInvalidInput {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		if len(words) == 0 {
			t.Fatal("no words and no error")
		}
		again, err := SplitCommand(quote(words))
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("%q -> %q -> %q (%v)", line, words, again, err)
		}
	})
}

// Whatever an upstream lists, every contract made from it compiles, is
// named SOURCE.x, and ids are unique and map back to a listed tool.
func FuzzBuildTools(f *testing.F) {
	f.Add([]byte(`[{"name":"read/file","inputSchema":{"type":"object","properties":{"p":{"type":"string"}}},"outputSchema":{"type":"object","properties":{"content":{"type":"string"}}},"annotations":{"readOnlyHint":true}}]`))
	f.Add([]byte(`[{"name":"a"},{"name":"a"},{"name":"a.b"},{"name":"a_b"},{"name":""}]`))
	f.Add([]byte(`[{"name":"x","inputSchema":{"type":"object","properties":{"x":{"$ref":"#/nowhere"}}}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ts []mcp.Tool
		if json.Unmarshal(data, &ts) != nil {
			return
		}
		set := buildTools("up", ts, nil)
		seen := map[string]bool{}
		for _, c := range set.contracts {
			if _, err := contracts.NewTool(c); err != nil {
				t.Fatalf("contract %s does not compile: %v", c.Tool, err)
			}
			if !strings.HasPrefix(c.Tool, "up.") || seen[c.Tool] || set.upstream[c.Tool] == "" {
				t.Fatalf("bad id %q (seen %v, map %v)", c.Tool, seen[c.Tool], set.upstream)
			}
			seen[c.Tool] = true
		}
		if len(set.contracts)+len(set.skipped) < len(ts) {
			t.Fatalf("%d tools became %d contracts and %d skipped", len(ts), len(set.contracts), len(set.skipped))
		}
	})
}

// Any tools/call answer becomes JSON (or a coded error), never a panic.
func FuzzResultValue(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"hi"}]}`))
	f.Add([]byte(`{"content":[],"structuredContent":{"a":[1,2]}}`))
	f.Add([]byte(`{"content":[{"type":"text","text":"bad"}],"isError":true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		raw := json.RawMessage(data)
		res, err := mcp.ParseCallToolResult(&raw)
		if err != nil {
			return
		}
		if res.IsError {
			if e := toolError("up", "up.t", res); e.Code != contracts.CodeToolFailed {
				t.Fatalf("isError coded %d", e.Code)
			}
			return
		}
		out, err := resultValue(res)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON %q", out)
		}
	})
}
