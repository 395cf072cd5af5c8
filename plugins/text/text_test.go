package text

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/theory/jsonpath"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/internal/plugintest"
)

func open(t *testing.T) *plugintest.Tools {
	tools, err := Tools(Config{})
	return plugintest.Server(t, tools, err)
}

func TestTemplate(t *testing.T) {
	s := open(t)
	values := map[string]any{
		"page":  map[string]any{"url": "ordo://notes/page_1", "title": "Q3"},
		"rows":  []any{map[string]any{"name": "Ana"}},
		"count": 3, "ok": true, "list": []any{"a", 1},
	}
	s.Refused("text.template", map[string]any{"template": "{{ curly", "values": values}, "", "template")
	got := s.Call("text.template", map[string]any{
		"template": "Notes {{ page.title }}: {{page.url}} — first {{rows.0.name}}, {{count}} items, ok={{ok}} {{list}}",
		"values":   values,
	}, "")
	if want := `Notes Q3: ordo://notes/page_1 — first Ana, 3 items, ok=true ["a",1]`; got["text"] != want {
		t.Fatalf("template = %q\nwant %q", got["text"], want)
	}
	e := s.Refused("text.template", map[string]any{"template": "{{a}} {{page.nope}} {{rows.5.name}}", "values": values}, "", "values")
	if !strings.Contains(e.Message, "a, page.nope, rows.5.name") {
		t.Fatalf("missing keys not named: %v", e)
	}
	s.Refused("text.template", map[string]any{"template": "{{ }}", "values": values}, "", "template")
	big := strings.Repeat("x", 1<<19)
	s.Refused("text.template", map[string]any{"template": "{{b}}{{b}}{{b}}", "values": map[string]any{"b": big}}, "", "template")
}

func TestExtractJSONField(t *testing.T) {
	s := open(t)
	doc := `{"data":{"items":[{"id":"a1","n":1.50},{"id":"b2","n":2}]},"url":"https://x"}`
	for path, want := range map[string]string{
		"$.url":                      `"https://x"`,
		"$.data.items[0].id":         `"a1"`,
		"$.data.items[*].id":         `["a1","b2"]`,
		"$.data.items[0].n":          `1.50`, // number text kept exactly
		"$.data.items[?@.n >= 2].id": `"b2"`,
	} {
		got := s.Call("text.extract_json_field", map[string]any{"json": doc, "path": path}, "")
		if v, _ := json.Marshal(got["value"]); string(v) != want || got["found"] != true {
			t.Errorf("%s = %s (%v), want %s", path, v, got, want)
		}
	}
	prose := "Here you go:\n```json\n{\"summary\": \"all good\"}\n```\nAnything else?"
	if got := s.Call("text.extract_json_field", map[string]any{"json": prose, "path": "$.summary"}, ""); got["value"] != "all good" {
		t.Fatalf("fenced = %v", got)
	}
	got := s.Call("text.extract_json_field", map[string]any{"json": doc, "path": "$.missing", "default": nil}, "")
	if got["value"] != nil || got["found"] != false || got["count"] != json.Number("0") {
		t.Fatalf("default = %v", got)
	}
	s.Refused("text.extract_json_field", map[string]any{"json": doc, "path": "$.missing"}, "", "path")
	s.Refused("text.extract_json_field", map[string]any{"json": doc, "path": "url"}, "", "path")
	s.Refused("text.extract_json_field", map[string]any{"json": "no json here", "path": "$.a"}, "", "json")
}

func TestJoin(t *testing.T) {
	s := open(t)
	if got := s.Call("text.join", map[string]any{"items": []any{"a", 2, true, nil}}, ""); got["text"] != "a, 2, true, null" || got["count"] != json.Number("4") {
		t.Fatalf("join = %v", got)
	}
	records := []any{map[string]any{"name": "Ana"}, map[string]any{"name": "Lee"}}
	got := s.Call("text.join", map[string]any{"items": records, "field": "name", "separator": "\n- ", "prefix": "- "}, "")
	if got["text"] != "- Ana\n- Lee" {
		t.Fatalf("join field = %q", got["text"])
	}
	if got := s.Call("text.join", map[string]any{"items": []any{"a", "b"}, "separator": ""}, ""); got["text"] != "ab" {
		t.Fatalf("empty separator = %q", got["text"])
	}
	if got := s.Call("text.join", map[string]any{"items": []any{}}, ""); got["text"] != "" {
		t.Fatalf("empty = %v", got)
	}
	s.Refused("text.join", map[string]any{"items": []any{"a"}, "field": "name"}, "", "items")
	s.Refused("text.join", map[string]any{"items": records, "field": "age"}, "", "field")
}

func TestParseTemplate(t *testing.T) {
	for _, bad := range []string{"{{", "a {{b", "{{a..b}}", "{{.a}}", "{{a b}}", "{{}}", "{{a{b}}"} {
		_, err := ParseTemplate(bad)
		if e := contracts.AsError(err); err == nil || e.Code != contracts.CodeInvalidInput || e.Details["field"] != "template" {
			t.Errorf("ParseTemplate(%q) = %v", bad, err)
		}
	}
	tpl, err := ParseTemplate("}} plain {not} {{ a.b }}}")
	if err != nil {
		t.Fatal(err)
	}
	if got, missing, _ := tpl.Render(map[string]any{"a": map[string]any{"b": "X"}}, 100); got != "}} plain {not} X}" || missing != nil {
		t.Fatalf("Render = %q, %v", got, missing)
	}
}

func FuzzTemplate(f *testing.F) {
	for _, s := range []string{"Hi {{name}}", "{{a.b.0}} and {{ c }}", "{{", "}}{{x}}}}", "{{a..b}}", "{{{{x}}}}"} {
		f.Add(s)
	}
	values := map[string]any{"name": "N", "a": map[string]any{"b": []any{"zero"}}, "c": json.Number("1")}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := ParseTemplate(s)
		if err != nil {
			if contracts.CodeOf(err) != contracts.CodeInvalidInput {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		text, missing, exceeded := tpl.Render(values, 1<<16)
		if exceeded || len(missing) > 0 {
			return
		}
		// Text without any placeholder renders to itself.
		if !strings.Contains(s, "{{") && text != s {
			t.Fatalf("Render(%q) = %q", s, text)
		}
	})
}

// TestExtractBounded: paths that would select a combinatorial number of
// nodes, or more JSON than a plugin may send, are refused. Unbounded,
// $..*..*..*..*..* on 126 bytes of nested arrays ran past the tool's timeout
// on 400 MB and kept going.
func TestExtractBounded(t *testing.T) {
	s := open(t)
	nested := strings.Repeat("[", 63) + strings.Repeat("]", 63)
	for _, path := range []string{"$..*..*..*", "$..*..*", "$..[?@..*]", "$" + strings.Repeat("[0,0,0,0]", 12),
		"$[?count(@" + strings.Repeat("[*,*,*,*]", 11) + ") > 0]"} {
		if e := s.Refused("text.extract_json_field", map[string]any{"json": nested, "path": path}, "", "path"); e.Details["limit"] == nil {
			t.Errorf("%s: %v, want a limit", path, e)
		}
	}
	deep := strings.Repeat("[", 60) + `"` + strings.Repeat("x", 300_000) + `"` + strings.Repeat("]", 60)
	s.Refused("text.extract_json_field", map[string]any{"json": deep, "path": "$..*"}, "", "path")
	deepLT := strings.Repeat("[", 60) + `"` + strings.Repeat("<", 50_000) + `"` + strings.Repeat("]", 60) // 6 bytes each in JSON
	s.Refused("text.extract_json_field", map[string]any{"json": deepLT, "path": "$..*"}, "", "path")
	got := s.Call("text.extract_json_field", map[string]any{"json": nested, "path": "$..*"}, "")
	if got["count"] != json.Number("62") {
		t.Fatalf("$..* on 63 nested arrays: %v", got["count"])
	}
	people := `{"people":[{"name":"Ann, \"A]\"..","age":3},{"name":"Bo","age":40}]}`
	got = s.Call("text.extract_json_field", map[string]any{"json": people, "path": `$.people[?match(@.name, "A.*") && @.name != "x,y]..z"].age`}, "")
	if got["value"] != json.Number("3") {
		t.Fatalf("filter with a function and a quoted name: %v", got)
	}
}

// FuzzPathBound checks boundPath's count against real selections: a path it
// accepts selects at most the document's nodes times shape's product.
func FuzzPathBound(f *testing.F) {
	for _, p := range []string{"$..*", "$[0,0][*,*]", `$..["a","a"]`, `$[?count(@[*,*]) > 1]`, `$["x,]\"..y"]`, "$[?@..b]"} {
		f.Add(p)
	}
	var doc any
	json.Unmarshal([]byte(`{"a":[1,{"b":[2,3],"a":"x"},[4,[5,{"b":null}]]],"c":{"d":"x,..]"}}`), &doc)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := jsonpath.Parse(s)
		if err != nil {
			return
		}
		if descendants, product := shape(p.String()); descendants <= 1 {
			if n := len(p.Select(doc)); n > countNodes(doc)*product {
				t.Fatalf("%s selects %d nodes, over %d nodes times %d", p, n, countNodes(doc), product)
			}
		}
	})
}
