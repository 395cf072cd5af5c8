package contracts

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchCatalog is 1,000 tools: 100 services of 10 tools, each with an
// input and an output schema and a two-key produces_map.
func benchCatalog(tb testing.TB) ToolMap {
	tb.Helper()
	m := make(ToolMap, 1000)
	for s := range 100 {
		for n := range 10 {
			name := fmt.Sprintf("svc%d.tool%d", s, n)
			c := Contract{
				Tool: name, Service: fmt.Sprintf("svc%d", s), Description: "benchmark tool " + name,
				RiskLevel: RiskRead,
				InputSchema: json.RawMessage(`{"type":"object","required":["q"],"properties":{
					"q":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1},"when":{"type":"string","format":"date-time"}}}`),
				OutputSchema: json.RawMessage(`{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"items":{"type":"array"}}}`),
				ProducesMap:  map[string]string{fmt.Sprintf("k%d_%d", s, n): "$.id", fmt.Sprintf("items%d_%d", s, n): "$.items[*]"},
			}
			t, err := NewTool(c)
			if err != nil {
				tb.Fatal(err)
			}
			m[name] = t
		}
	}
	return m
}

// benchPlan is 50 actions over distinct tools; action i requires the keys
// of actions i-1 and i-7 (when they exist), so the DAG has real fan-in and
// several levels, and depends_on uses LLM-style index references.
func benchPlan() []byte {
	var actions []string
	for i := range 50 {
		s, n := (i*7)%100, i%10
		var req []string
		for _, back := range []int{1, 7} {
			if j := i - back; j >= 0 {
				req = append(req, fmt.Sprintf(`"k%d_%d"`, (j*7)%100, j%10))
			}
		}
		deps := ""
		if i >= 2 {
			deps = fmt.Sprintf(`,"depends_on":["step_%d"]`, i-1)
		}
		actions = append(actions, fmt.Sprintf(
			`{"id":"a%d","tool":"svc%d.tool%d","intent":"read","requires":[%s],"produces":["k%d_%d"],"success_criteria":["k%d_%d exists"]%s}`,
			i, s, n, strings.Join(req, ","), s, n, s, n, deps))
	}
	return []byte("Here is the plan:\n```json\n" +
		`{"version":"1.0","goal":"benchmark","timezone":"UTC","constraints":{"max_actions":50},"actions":[` +
		strings.Join(actions, ",") + "]}\n```\n")
}

func BenchmarkCheckPlan50x1000(b *testing.B) {
	cat := benchCatalog(b)
	text := benchPlan()
	p, err := ParsePlan(text)
	if err != nil {
		b.Fatal(err)
	}
	g, err := CheckPlan(p, cat, CheckOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d actions, %d levels", len(p.Actions), len(g.Levels))
	b.Run("parse+check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := ParsePlan(text)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := CheckPlan(p, cat, CheckOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := CheckPlan(p, cat, CheckOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkToolCall(b *testing.B) {
	notion, _ := testCatalog(b).Lookup("notion.create_page")
	payload := map[string]any{"title": "회의 기록", "parent_id": "db", "content": "notes"}
	result := map[string]any{"id": "page_123", "url": "https://notion.so/page_123"}
	b.ReportAllocs()
	for b.Loop() {
		if err := notion.ValidateInput(payload); err != nil {
			b.Fatal(err)
		}
		if err := notion.ValidateOutput(result); err != nil {
			b.Fatal(err)
		}
		if _, err := notion.Produce(result); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewTool(b *testing.B) {
	c := readContract(b, "notion.create_page")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewTool(c); err != nil {
			b.Fatal(err)
		}
	}
}
