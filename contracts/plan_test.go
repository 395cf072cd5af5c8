package contracts

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// plan wraps action objects (JSON text) in a version 1.0 plan.
func plan(actions ...string) string {
	return `{"version":"1.0","goal":"g","timezone":"Asia/Seoul","actions":[` + strings.Join(actions, ",") + `]}`
}

func TestCheckSeedScenarios(t *testing.T) {
	cat := testCatalog(t)
	cases := []struct {
		name   string
		text   string
		opts   CheckOptions
		levels [][]string
		deps   map[string][]string
		code   Code
		action string
		detail map[string]any
	}{
		{
			name:   "seed 004 scenario 1: notion page then slack",
			text:   string(readPlan(t, "scenario1.json")),
			levels: [][]string{{"a1"}, {"a2"}},
			deps:   map[string][]string{"a1": {}, "a2": {"a1"}},
		},
		{
			name:   "seed 004 scenario 2 before re-plan: nobody produces summary",
			text:   string(readPlan(t, "scenario2.json")),
			code:   CodeUnsatisfiedRequires,
			action: "a2",
			detail: map[string]any{"key": "summary"},
		},
		{
			name:   "scenario 2 with summary already in state",
			text:   string(readPlan(t, "scenario2.json")),
			opts:   CheckOptions{InitialState: []string{"summary"}},
			levels: [][]string{{"a1", "a2"}},
			deps:   map[string][]string{"a1": {}, "a2": {}},
		},
		{
			name: "cycle through requires",
			text: plan(
				`{"id":"a1","tool":"notion.create_page","intent":"write","requires":["message_ts"],"produces":["page_url"]}`,
				`{"id":"a2","tool":"slack.post_message","intent":"notify","requires":["page_url"],"produces":["message_ts"]}`),
			code:   CodeCycle,
			action: "a1",
			detail: map[string]any{"cycle": []string{"a1", "a2", "a1"}},
		},
		{
			name:   "self dependency",
			text:   plan(`{"id":"a1","tool":"notion.create_page","intent":"write","requires":[],"produces":[],"depends_on":["a1"]}`),
			code:   CodeCycle,
			action: "a1",
			detail: map[string]any{"cycle": []string{"a1", "a1"}},
		},
		{
			name:   "unknown tool",
			text:   plan(`{"id":"a1","tool":"notion.delete_page","intent":"write","requires":[],"produces":[]}`),
			code:   CodeUnknownTool,
			action: "a1",
		},
		{
			name: "duplicate ids",
			text: plan(
				`{"id":"a1","tool":"notion.create_page","intent":"write","requires":[],"produces":[]}`,
				`{"id":"a1","tool":"slack.post_message","intent":"notify","requires":[],"produces":[]}`),
			code:   CodeDuplicateAction,
			action: "a1",
		},
		{
			name:   "depends_on unknown id",
			text:   plan(`{"id":"a1","tool":"notion.create_page","intent":"write","requires":[],"produces":[],"depends_on":["zz"]}`),
			code:   CodeUnknownDependency,
			action: "a1",
			detail: map[string]any{"dependency": "zz"},
		},
		{
			name:   "produces what the tool cannot",
			text:   plan(`{"id":"a1","tool":"notion.create_page","intent":"write","requires":[],"produces":["summary"]}`),
			code:   CodeUnproducibleKey,
			action: "a1",
			detail: map[string]any{"key": "summary"},
		},
		{
			name: "more actions than the plan allows",
			text: `{"version":"1.0","goal":"g","timezone":"UTC","constraints":{"max_actions":1},"actions":[` +
				`{"id":"a1","tool":"notion.create_page","intent":"write","requires":[],"produces":[]},` +
				`{"id":"a2","tool":"notion.create_page","intent":"write","requires":[],"produces":[]}]}`,
			code:   CodeTooManyActions,
			action: "a2",
			detail: map[string]any{"max": 1, "count": 2},
		},
		{
			name:   "a plan cannot raise its own bound past MaxPlanActions",
			text:   manyActions(MaxPlanActions+1, 1<<30),
			code:   CodeTooManyActions,
			action: fmt.Sprintf("a%d", MaxPlanActions),
			detail: map[string]any{"max": MaxPlanActions, "count": MaxPlanActions + 1},
		},
		{
			name: "more actions than the caller allows",
			text: plan(
				`{"id":"a1","tool":"notion.create_page","intent":"write","requires":[],"produces":[]}`,
				`{"id":"a2","tool":"notion.create_page","intent":"write","requires":[],"produces":[]}`),
			opts:   CheckOptions{MaxActions: 1},
			code:   CodeTooManyActions,
			action: "a2",
		},
		{
			name: "notion-only plan uses slack",
			text: `{"version":"1.0","goal":"g","timezone":"UTC","constraints":{"allowed_services":["notion"]},"actions":[` +
				`{"id":"a1","tool":"notion.create_page","intent":"write","requires":[],"produces":["page_url"]},` +
				`{"id":"a2","tool":"slack.post_message","intent":"notify","requires":["page_url"],"produces":[]}]}`,
			code:   CodeServiceNotAllowed,
			action: "a2",
		},
		{
			name:   "caller allows only a prefix",
			text:   string(readPlan(t, "scenario1.json")),
			opts:   CheckOptions{AllowedServices: []string{"notion.create_*", "slack.post_message"}},
			levels: [][]string{{"a1"}, {"a2"}},
			deps:   map[string][]string{"a1": {}, "a2": {"a1"}},
		},
		{
			name:   "caller allows sheets only",
			text:   string(readPlan(t, "scenario1.json")),
			opts:   CheckOptions{AllowedServices: []string{"sheets"}},
			code:   CodeServiceNotAllowed,
			action: "a1",
		},
		{
			name: "requires produced by a later action, and two producers",
			text: plan(
				`{"id":"post","tool":"slack.post_message","intent":"notify","requires":["page_url"],"produces":[]}`,
				`{"id":"p1","tool":"notion.create_page","intent":"write","requires":[],"produces":["page_url"]}`,
				`{"id":"p2","tool":"notion.create_page","intent":"write","requires":[],"produces":["page_url","page_id"]}`,
				`{"id":"read","tool":"sheets.get_range","intent":"read","requires":[],"produces":[],"depends_on":["post"]}`),
			levels: [][]string{{"p1", "p2"}, {"post"}, {"read"}},
			deps:   map[string][]string{"post": {"p1", "p2"}, "p1": {}, "p2": {}, "read": {"post"}},
		},
		{
			name:   "no actions: a simple answer",
			text:   plan(),
			levels: nil,
			deps:   map[string][]string{},
		},
		{
			name:   "clarify instead of planning",
			text:   `{"version":"1.0","goal":"g","timezone":"UTC","actions":[],"clarification_questions":["Which channel?"]}`,
			levels: nil,
			deps:   map[string][]string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePlan([]byte(tc.text))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			g, err := CheckPlan(p, cat, tc.opts)
			if tc.code != 0 {
				if g != nil {
					t.Fatal("got a graph from a rejected plan")
				}
				e := wantCode(t, err, tc.code)
				if e.Details["action"] != tc.action {
					t.Fatalf("action = %v, want %q (%v)", e.Details["action"], tc.action, err)
				}
				for k, v := range tc.detail {
					if !reflect.DeepEqual(e.Details[k], v) {
						t.Fatalf("details[%s] = %#v, want %#v", k, e.Details[k], v)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g.Levels, tc.levels) {
				t.Fatalf("levels = %v, want %v", g.Levels, tc.levels)
			}
			if !reflect.DeepEqual(g.Deps, tc.deps) {
				t.Fatalf("deps = %v, want %v", g.Deps, tc.deps)
			}
		})
	}
}

func TestParsePlanSchemaViolations(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		instance string
		action   string
	}{
		{"extra top-level field", `{"version":"1.0","goal":"g","timezone":"UTC","actions":[],"notes":"x"}`, "", ""},
		{"extra action field",
			plan(`{"id":"a1","tool":"notion.create_page","intent":"write","requires":[],"produces":[],"payload":{}}`),
			"/actions/0", "a1"},
		{"bad id pattern",
			plan(`{"id":"1st step","tool":"notion.create_page","intent":"write","requires":[],"produces":[]}`),
			"/actions/0/id", "1st step"},
		{"id missing",
			plan(`{"tool":"notion.create_page","intent":"write","requires":[],"produces":[]}`),
			"/actions/0", "actions[0]"},
		{"bad intent",
			plan(`{"id":"a1","tool":"notion.create_page","intent":"delete","requires":[],"produces":[]}`),
			"/actions/0/intent", "a1"},
		{"wrong version", `{"version":"2.0","goal":"g","timezone":"UTC","actions":[]}`, "/version", ""},
		{"goal missing", `{"version":"1.0","timezone":"UTC","actions":[]}`, "", ""},
		{"requires is null", plan(`{"id":"a1","tool":"t.x","intent":"read","requires":null,"produces":[]}`), "/actions/0/requires", "a1"},
		{"depends_on entry of the wrong type",
			plan(`{"id":"a1","tool":"t.x","intent":"read","requires":[],"produces":[],"depends_on":[true]}`),
			"/actions/0/depends_on/0", "a1"},
		{"timeout_ms past a day (it overflowed a time.Duration)",
			plan(`{"id":"a1","tool":"t.x","intent":"read","requires":[],"produces":[],"timeout_ms":10000000000000}`),
			"/actions/0/timeout_ms", "a1"},
		{"a requires key twice (each copy was an edge label per producer: 865 KB became a 144 MB graph)",
			plan(`{"id":"a1","tool":"t.x","intent":"read","requires":["k","j","k"],"produces":[]}`),
			"/actions/0/requires", "a1"},
		{"17 success criteria (55,000 took 15 s of CPU to check one 1 MiB result)",
			plan(`{"id":"a1","tool":"t.x","intent":"read","requires":[],"produces":[],"success_criteria":[` + strings.Repeat(`"k exists",`, 16) + `"k exists"]}`),
			"/actions/0/success_criteria", "a1"},
		{"a produces key twice",
			plan(`{"id":"a1","tool":"t.x","intent":"read","requires":[],"produces":["k","k"]}`),
			"/actions/0/produces", "a1"},
		{"empty clarification question", `{"version":"1.0","goal":"g","timezone":"UTC","actions":[],"clarification_questions":[""]}`,
			"/clarification_questions/0", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePlan([]byte(tc.text))
			if p != nil {
				t.Fatal("got a plan")
			}
			e := wantCode(t, err, CodeSchemaViolation)
			if e.Details["instance_location"] != tc.instance {
				t.Fatalf("instance = %v, want %q (%v)", e.Details["instance_location"], tc.instance, err)
			}
			if tc.action != "" && e.Details["action"] != tc.action {
				t.Fatalf("action = %v, want %q", e.Details["action"], tc.action)
			}
		})
	}
}

func TestParsePlanCoercesDependencyReferences(t *testing.T) {
	first := `{"id":"first","tool":"notion.create_page","intent":"write","requires":[],"produces":[]}`
	second := func(deps string) string {
		return `{"id":"second","tool":"slack.post_message","intent":"notify","requires":[],"produces":[],"depends_on":` + deps + `}`
	}
	for _, deps := range []string{`["tasks.1"]`, `["step_1"]`, `["1"]`, `[1]`, `["Step 1"]`, `["action-1"]`, `["first"]`} {
		p, err := ParsePlan([]byte(plan(first, second(deps))))
		if err != nil {
			t.Fatalf("%s: %v", deps, err)
		}
		if got := p.Actions[1].DependsOn; !reflect.DeepEqual(got, []string{"first"}) {
			t.Fatalf("%s: depends_on = %v", deps, got)
		}
	}
	// An existing id wins over an index: "step_2" is the id of the first action.
	p, err := ParsePlan([]byte(plan(
		`{"id":"step_2","tool":"notion.create_page","intent":"write","requires":[],"produces":[]}`,
		second(`["step_2", 1]`))))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Actions[1].DependsOn; !reflect.DeepEqual(got, []string{"step_2", "step_2"}) {
		t.Fatalf("depends_on = %v", got)
	}
	for _, deps := range []string{`["tasks.3"]`, `[0]`, `[1.5]`, `["the notion step"]`, `[-1]`} {
		_, err := ParsePlan([]byte(plan(first, second(deps))))
		e := wantCode(t, err, CodeAmbiguousReference)
		if e.Details["action"] != "second" {
			t.Fatalf("%s: details %v", deps, e.Details)
		}
	}
}

func TestParsePlanFromProse(t *testing.T) {
	plain := readPlan(t, "scenario1.json")
	wrapped := "Sure! Here is the plan:\n\n```json\n" + string(plain) + "```\n\nIt creates the page {first} and then posts."
	p, err := ParsePlan([]byte(wrapped))
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParsePlan(plain)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Fatal("prose-wrapped plan differs from the plain one")
	}
	if p.Goal != "회의 기록 생성 후 슬랙 공유" || len(p.Actions) != 2 || p.Actions[1].Requires[0] != "page_url" {
		t.Fatalf("decoded %+v", p)
	}
	wantCode(t, func() error { _, err := ParsePlan([]byte("I cannot plan this.")); return err }(), CodeInvalidJSON)
}

func TestValidatePlanValue(t *testing.T) {
	p, err := ParsePlan(readPlan(t, "scenario1.json"))
	if err != nil {
		t.Fatal(err)
	}
	p.Actions[0].Requires = nil // a Go caller's empty list
	if err := ValidatePlan(p); err != nil {
		t.Fatal(err)
	}
	p.Actions[0].ID = "bad id"
	e := wantCode(t, ValidatePlan(p), CodeSchemaViolation)
	if e.Details["action"] != "bad id" {
		t.Fatalf("details %v", e.Details)
	}
	wantCode(t, ValidatePlan(nil), CodeInvalidInput)
}

func TestPlanSchemaIsACopy(t *testing.T) {
	s := PlanSchema()
	if !bytes.Contains(s, []byte(`"clarification_questions"`)) || !bytes.Contains(s, []byte("2020-12")) {
		t.Fatal("schema lacks the additions")
	}
	s[0] = 'x'
	if PlanSchema()[0] != '{' {
		t.Fatal("PlanSchema exposes the embedded bytes")
	}
}

func TestMermaid(t *testing.T) {
	cat := testCatalog(t)
	p, err := ParsePlan([]byte(plan(
		`{"id":"a1","tool":"notion.create_page","intent":"write","requires":[],"produces":["page_url","page_id"]}`,
		`{"id":"end","tool":"slack.post_message","intent":"notify","requires":["page_id","page_url"],"produces":[]}`,
		`{"id":"a3","tool":"sheets.get_range","intent":"read","requires":[],"produces":[],"depends_on":["end"]}`)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := CheckPlan(p, cat, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `flowchart TD
    n0["a1: notion.create_page"]
    n1["end: slack.post_message"]
    n2["a3: sheets.get_range"]
    n0 -->|"page_id, page_url"| n1
    n1 --> n2
`
	if got := g.Mermaid(p); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := mermaidText(`a"b|<c>#`); got != "a#quot;b#124;#lt;c#gt;#35;" {
		t.Fatalf("escape: %s", got)
	}
}

// manyActions is a plan of n independent actions that allows itself max.
func manyActions(n, max int) string {
	acts := make([]string, n)
	for i := range acts {
		acts[i] = fmt.Sprintf(`{"id":"a%d","tool":"notion.create_page","intent":"write","requires":[],"produces":[]}`, i)
	}
	return fmt.Sprintf(`{"version":"1.0","goal":"g","timezone":"UTC","constraints":{"max_actions":%d},"actions":[%s]}`, max, strings.Join(acts, ","))
}

// The schema's timeout_ms maximum is MaxTimeoutMS: a plan may ask for as
// long as a tool contract may, no more.
func TestPlanTimeoutBoundIsMaxTimeoutMS(t *testing.T) {
	for ms, ok := range map[int]bool{MaxTimeoutMS: true, MaxTimeoutMS + 1: false} {
		_, err := ParsePlan([]byte(plan(fmt.Sprintf(`{"id":"a1","tool":"t.x","intent":"read","requires":[],"produces":[],"timeout_ms":%d}`, ms))))
		if (err == nil) != ok {
			t.Fatalf("timeout_ms %d: err = %v", ms, err)
		}
	}
}
