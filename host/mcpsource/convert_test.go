package mcpsource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
)

func hint(b bool) *bool { return &b }

func TestRiskFromAnnotations(t *testing.T) {
	for _, c := range []struct {
		a    mcp.ToolAnnotation
		want contracts.Risk
	}{
		{mcp.ToolAnnotation{}, contracts.RiskWrite},
		{mcp.ToolAnnotation{ReadOnlyHint: hint(true)}, contracts.RiskRead},
		{mcp.ToolAnnotation{ReadOnlyHint: hint(false), DestructiveHint: hint(true)}, contracts.RiskDestructive},
		{mcp.ToolAnnotation{DestructiveHint: hint(true)}, contracts.RiskDestructive},
		{mcp.ToolAnnotation{ReadOnlyHint: hint(false), DestructiveHint: hint(false)}, contracts.RiskWrite},
		{mcp.ToolAnnotation{ReadOnlyHint: hint(true), DestructiveHint: hint(true)}, contracts.RiskRead},
	} {
		if got := riskOf(c.a); got != c.want {
			t.Errorf("%+v: %s, want %s", c.a, got, c.want)
		}
	}
}

func tools(t *testing.T, js string) []mcp.Tool {
	t.Helper()
	var ts []mcp.Tool
	if err := json.Unmarshal([]byte(js), &ts); err != nil {
		t.Fatal(err)
	}
	return ts
}

// Names outside the contract id pattern are sanitized; a collision gets a
// hash suffix and the name that needed no change keeps its spelling.
func TestNamesSanitizedStably(t *testing.T) {
	ts := tools(t, `[{"name":"files/read","inputSchema":{"type":"object"}},{"name":"files_read","inputSchema":{"type":"object"}},
		{"name":"a.b c","inputSchema":{"type":"object"}}]`)
	set := buildTools("up", ts, nil)
	var ids []string
	for _, c := range set.contracts {
		ids = append(ids, c.Tool)
	}
	if len(ids) != 3 || !slices.Contains(ids, "up.files_read") || !slices.Contains(ids, "up.a_b_c") || set.upstream["up.files_read"] != "files_read" {
		t.Fatalf("ids %v map %v", ids, set.upstream)
	}
	slices.Reverse(ts)
	again := buildTools("up", ts, nil)
	if !maps.Equal(set.upstream, again.upstream) || set.hash != again.hash {
		t.Fatalf("order changed ids: %v vs %v", set.upstream, again.upstream)
	}
}

func TestContractsFromSchemas(t *testing.T) {
	ts := tools(t, `[
	 {"name":"read","description":"Reads.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},
	  "outputSchema":{"type":"object","properties":{"content":{"type":"string"},"odd-name":{"type":"string"}},"required":["content"]},
	  "annotations":{"readOnlyHint":true}},
	 {"name":"poke","inputSchema":{},"annotations":{"destructiveHint":true,"idempotentHint":true}},
	 {"name":"broken","inputSchema":{"type":"object","properties":{"x":{"type":"nonsense"}}}},
	 {"name":"","inputSchema":{"type":"object"}}]`)
	set := buildTools("up", ts, map[string]host.ToolOverride{
		"up.poke": {Risk: contracts.RiskWrite, Scopes: []string{"poke:all"}, Tags: []string{contracts.TagAdmin}, TimeoutMS: 500}})
	if len(set.contracts) != 2 || len(set.skipped) != 2 {
		t.Fatalf("contracts %d skipped %+v", len(set.contracts), set.skipped)
	}
	byName := map[string]contracts.Contract{}
	for _, c := range set.contracts {
		if _, err := contracts.NewTool(c); err != nil {
			t.Fatal(err)
		}
		byName[c.Tool] = c
	}
	read := byName["up.read"]
	if read.RiskLevel != contracts.RiskRead || !read.Idempotent || read.Service != "up" ||
		read.ProducesMap["content"] != "$.content" || read.ProducesMap[KeyResult] != "$" || len(read.ProducesMap) != 2 {
		t.Fatalf("read %+v", read)
	}
	tool, _ := contracts.NewTool(read)
	if err := tool.ValidateInput(map[string]any{}); contracts.CodeOf(err) != contracts.CodeSchemaViolation {
		t.Fatalf("missing path accepted: %v", err)
	}
	poke := byName["up.poke"]
	if poke.RiskLevel != contracts.RiskWrite || poke.TimeoutMS != 500 || !slices.Equal(poke.Tags, []string{contracts.TagAdmin}) ||
		string(poke.OutputSchema) != "{}" || poke.ProducesMap[KeyText] != "$.text" || !strings.Contains(poke.Description, `"poke"`) {
		t.Fatalf("poke %+v", poke)
	}
}

func TestResultValue(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, `{"text":"a\nb"}`},
		{`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":1}}`, `{"n":1}`},
		{`{"content":[]}`, `{"text":""}`},
		{`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"text":""}`},
	} {
		raw := json.RawMessage(c.in)
		res, err := mcp.ParseCallToolResult(&raw)
		if err != nil {
			t.Fatal(err)
		}
		out, err := resultValue(res)
		if err != nil || string(out) != c.want {
			t.Errorf("%s: %s %v, want %s", c.in, out, err, c.want)
		}
	}
	raw := json.RawMessage(`{"content":[{"type":"text","text":"no such file"}],"isError":true}`)
	res, _ := mcp.ParseCallToolResult(&raw)
	e := toolError("up", "up.read", res)
	if e.Code != contracts.CodeToolFailed || e.Retryable || !strings.Contains(e.Message, "no such file") || e.Details["upstream"] != "up" {
		t.Fatalf("%+v", e)
	}
}

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		`npx -y @modelcontextprotocol/server-filesystem /tmp`: {"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
		`node 'my server.js' "a \"b\"" c\ d`:                  {"node", "my server.js", `a "b"`, "c d"},
		`  x  ''  `:                                           {"x", ""},
		`a"b"'c'`:                                             {"abc"},
	} {
		got, err := SplitCommand(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{``, `   `, `'open`, `"open`, `trailing\`} {
		if _, err := SplitCommand(in); contracts.CodeOf(err) != contracts.CodeInvalidInput {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// TestToolCountBounded: an upstream listing more than MaxTools tools
// (16 MiB of tiny ones are 75,000 and take seconds to convert, at every
// change of the list) gets its first MaxTools by name, whatever order they
// were listed in; one skipped entry says how many more were left out.
func TestToolCountBounded(t *testing.T) {
	var ts []mcp.Tool
	for i := range MaxTools + 5 {
		ts = append(ts, mcp.NewTool(fmt.Sprintf("t%05d", i)))
	}
	slices.Reverse(ts)
	set := buildTools("many", ts, nil)
	if len(set.contracts) != MaxTools || len(set.skipped) != 1 || set.upstream["many.t00000"] == "" ||
		set.skipped[0].Tool != fmt.Sprintf("t%05d", MaxTools) || !strings.Contains(set.skipped[0].Error, "the 4 after it") ||
		!strings.Contains(set.skipped[0].Error, fmt.Sprint(MaxTools)) {
		t.Fatalf("%d contracts, skipped %v", len(set.contracts), set.skipped)
	}
}

// Arguments the schema marks writeOnly or format "password", and those an
// override lists, are the contract's secret fields; a writeOnly false or
// another format is not.
func TestSecretFieldsFromSchema(t *testing.T) {
	ts := tools(t, `[{"name":"login","inputSchema":{"type":"object","properties":{
	  "user":{"type":"string","writeOnly":false},"password":{"type":"string","writeOnly":true},
	  "pin":{"type":"string","format":"password"},"mail":{"type":"string","format":"email"},"otp":{"type":"string"}}}}]`)
	set := buildTools("up", ts, map[string]host.ToolOverride{"login": {SecretFields: []string{"otp", "password"}}})
	if len(set.contracts) != 1 {
		t.Fatalf("contracts %+v skipped %+v", set.contracts, set.skipped)
	}
	if tool, err := contracts.NewTool(set.contracts[0]); err != nil || !slices.Equal(tool.Contract.SecretFields, []string{"otp", "password", "pin"}) {
		t.Fatalf("tool %+v: %v", tool, err)
	}
	bad := host.UpstreamSpec{Name: "up", URL: "http://127.0.0.1:9/mcp", Overrides: map[string]host.ToolOverride{"login": {SecretFields: []string{""}}}}
	if err := bad.Check(); contracts.CodeOf(err) != contracts.CodeInvalidInput || !strings.Contains(err.Error(), "overrides.login.secret_fields") {
		t.Fatalf("an empty secret field: %v", err)
	}
}

// BenchmarkStderrLineByteByByte: a stdio upstream writing a 64 KiB line to
// its stderr one byte at a time. Each write looks for line ends in what it
// brought alone, so the line costs its length in copying, not its length
// squared (about 2 GB for this line when every write re-read it whole).
func BenchmarkStderrLineByteByByte(b *testing.B) {
	line := bytes.Repeat([]byte("x"), lineMax)
	for b.Loop() {
		t := &tail{log: slog.New(slog.DiscardHandler), hide: contracts.Conceal("s3cret-value")}
		for i := range line {
			t.Write(line[i : i+1])
		}
		t.Write([]byte("\n"))
	}
}
