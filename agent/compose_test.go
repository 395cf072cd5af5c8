package agent

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

func TestSummarise(t *testing.T) {
	long := strings.Repeat("ab ", 100)
	link := "https://notes.local/" + strings.Repeat("p", 200)
	for _, tc := range []struct{ key, raw, want string }{
		{"records", `[{"a":1},{"a":2},{"a":3}]`, "3 items"},
		{"records", `[1]`, "1 item"},
		{"records", `[]`, "0 items"},
		{"page_url", `"` + link + `"`, link},
		{"target", `"ordo://notes/p1"`, "ordo://notes/p1"},
		{"message_ts", `"1700000000.000001"`, `"1700000000.000001"`},
		{"text", `"line one\nline two"`, `"line one\nline two"`},
		{"count", `42`, `42`},
	} {
		if got := templateLanguages["en"].summarise(tc.key, []byte(tc.raw)); got != tc.want {
			t.Errorf("summarise(%s, %.40s) = %q, want %q", tc.key, tc.raw, got, tc.want)
		}
	}
	got := templateLanguages["en"].summarise("text", []byte(`"`+long+`"`))
	if !strings.HasSuffix(got, `…"`) || utf8.RuneCountInString(got) != summaryLimit+2 {
		t.Errorf("long text: %q (%d runes)", got, utf8.RuneCountInString(got))
	}
	obj := `{"k":"` + strings.Repeat("v", 300) + `"}`
	if got := templateLanguages["en"].summarise("result", []byte(obj)); utf8.RuneCountInString(got) != summaryLimit || !strings.HasPrefix(got, `{"k":"vvv`) {
		t.Errorf("object: %q", got)
	}
}

// Without a model the answer names each step and summarises what it
// produced: lists as counts, long text cut, the page link whole.
func TestTemplateAnswerSummarisesState(t *testing.T) {
	rows := make([]any, 40)
	for i := range rows {
		rows[i] = map[string]any{"month": "2026-01", "revenue": "2400.00"}
	}
	read := tool("sheets.query", contracts.RiskRead, `{"type":"object"}`,
		`{"type":"object","required":["records"],"properties":{"records":{"type":"array"}}}`,
		map[string]string{"records": "$.records"}, returns(map[string]any{"records": rows}))
	join := tool("text.join", contracts.RiskRead, `{"type":"object","properties":{"items":{"type":"array"}}}`,
		`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`,
		map[string]string{"text": "$.text"}, func(context.Context, sdk.Call) (any, error) {
			return map[string]any{"text": strings.Repeat("2026-01 North Widget 120 2400.00\n", 40)}, nil
		})
	tt := newTools(t, read, join, notesTool())
	plan := mustPlan(t, `{"version":"1.0","goal":"summarise the sheet into a page","timezone":"UTC","actions":[
	 {"id":"read","tool":"sheets.query","intent":"read","requires":[],"produces":["records"]},
	 {"id":"join","tool":"text.join","intent":"transform","requires":["records"],"produces":["text"],"input_bindings":{"items":"records"}},
	 {"id":"page","tool":"notes.create_page","intent":"write","requires":["text"],"produces":["page_url"],"inputs":{"title":"Sales"},"input_bindings":{"content":"text"}}]}`)
	run, err := New(Config{}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: plan})
	wantStatus(t, run, err, contracts.RunCompleted)
	ans := run.Result.Answer
	if run.Result.Composer != "template" || !strings.Contains(ans, "records=40 items") ||
		!strings.Contains(ans, "page_url=https://notes.local/page_123") || !strings.Contains(ans, `…"`) {
		t.Fatalf("answer:\n%s", ans)
	}
	if len(ans) > 600 || strings.Contains(ans, "2400.00\"}") {
		t.Fatalf("the answer dumps state (%d bytes):\n%s", len(ans), ans)
	}
}

// Two steps producing one key: each line shows its own step's value.
func TestTemplateAnswerShowsEachStepsOwnValue(t *testing.T) {
	tt := newTools(t, templateTool())
	plan := mustPlan(t, `{"version":"1.0","goal":"two texts","timezone":"UTC","actions":[
	 {"id":"a1","tool":"text.template","intent":"transform","requires":[],"produces":["text"],"inputs":{"template":"first","values":{}}},
	 {"id":"a2","tool":"text.template","intent":"transform","requires":[],"depends_on":["a1"],"produces":["text"],"inputs":{"template":"second","values":{}}}]}`)
	run, err := New(Config{}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: plan})
	wantStatus(t, run, err, contracts.RunCompleted)
	if !strings.Contains(run.Result.Answer, `text.template: succeeded (text="first")`) || !strings.Contains(run.Result.Answer, `text.template: succeeded (text="second")`) {
		t.Fatalf("answer:\n%s", run.Result.Answer)
	}
}

// A Korean locale gets the template answer in Korean; any other language
// falls back to English.
func TestTemplateAnswerInTheLocale(t *testing.T) {
	tt := newTools(t, templateTool())
	plan := `{"version":"1.0","goal":"인사","timezone":"Asia/Seoul","actions":[
	 {"id":"a1","tool":"text.template","intent":"transform","summary":"인사말 쓰기","requires":[],"produces":["text"],"inputs":{"template":"안녕","values":{}}}]}`
	for locale, want := range map[string]string{"ko-KR": "완료: 인사\n- 인사말 쓰기: 성공", "fr-FR": "Done: 인사\n- 인사말 쓰기: succeeded"} {
		run, err := New(Config{}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: mustPlan(t, plan),
			Options: contracts.RunOptions{Locale: locale, AutoApprove: true}})
		wantStatus(t, run, err, contracts.RunCompleted)
		if !strings.HasPrefix(run.Result.Answer, want) {
			t.Errorf("%s answer %q, want it to start %q", locale, run.Result.Answer, want)
		}
	}
}
