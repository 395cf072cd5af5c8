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
	if run.Result.Composer != "template" || !strings.Contains(ans, "(40 items)") ||
		!strings.Contains(ans, "(https://notes.local/page_123)") || !strings.Contains(ans, `…"`) {
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
	if !strings.Contains(run.Result.Answer, `: succeeded ("first")`) || !strings.Contains(run.Result.Answer, `: succeeded ("second")`) {
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

// Every reason a template answer gives is written in every template
// language, under the language's own key.
func TestWhyUnfinishedInEveryLanguage(t *testing.T) {
	for base, w := range templateLanguages {
		if w.lang != base {
			t.Errorf("templateLanguages[%q].lang = %q", base, w.lang)
		}
		for code, words := range whyUnfinished {
			if words[base] == "" {
				t.Errorf("no %s reason for code %d", base, code)
			}
		}
	}
	if got := templateLanguages["ko"].reason(contracts.Errorf(contracts.CodeCancelled, "x")); got != "취소되었습니다" {
		t.Errorf("ko reason for a cancelled run = %q", got)
	}
	if got := templateLanguages["en"].reason(contracts.Errorf(6042, "x")); got != "a step failed" {
		t.Errorf("en reason for code 6042 = %q, want its class's", got)
	}
}

// A template answer is for the person: no action ids, state keys, tool
// names, internal ids (a page id, a message timestamp) or raw error
// messages, in English and in Korean, whether the run finished or not.
// A step without a summary is its tool's description.
func TestTemplateAnswerShowsNoInternals(t *testing.T) {
	failing := tool("mail.send", contracts.RiskWrite, `{"type":"object"}`, `{"type":"object"}`, nil,
		func(context.Context, sdk.Call) (any, error) {
			return nil, sdk.ToolError(false, "smtp relay mail-7 refused")
		})
	failing.Contract.Description = "Send an e-mail to one address. Needs the mail service."
	tt := newTools(t, notesTool(), chatTool(), failing)
	ok := `{"version":"1.0","goal":"write and post","timezone":"UTC","actions":[
	 {"id":"write_page","tool":"notes.create_page","intent":"write","summary":"Write the page","requires":[],"produces":["page_id","page_url"],"inputs":{"title":"x"}},
	 {"id":"post_it","tool":"chat.post_message","intent":"notify","requires":["page_url"],"produces":["message_ts"],"inputs":{"channel":"#general"},"input_bindings":{"text":"page_url"}}]}`
	bad := `{"version":"1.0","goal":"mail it","timezone":"UTC","actions":[
	 {"id":"send_mail","tool":"mail.send","intent":"notify","requires":[],"produces":[]}]}`
	cases := []struct {
		locale, plan, want string
	}{
		{"en-US", ok, "Done: write and post\n- Write the page: succeeded (https://notes.local/page_123)\n- Step 2: succeeded"},
		{"ko-KR", ok, "완료: write and post\n- Write the page: 성공 (https://notes.local/page_123)\n- 2단계: 성공"},
		{"en-US", bad, "Could not finish \"mail it\": a step failed.\n- Send an e-mail to one address: failed"},
		{"ko-KR", bad, "끝내지 못했습니다: \"mail it\" (단계가 실패했습니다)\n- Send an e-mail to one address: 실패"},
	}
	for _, c := range cases {
		run, err := New(Config{OnFailure: contracts.OnFailureFail}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: mustPlan(t, c.plan),
			Options: contracts.RunOptions{Locale: c.locale, AutoApprove: true, AutoApprovePolicy: true}})
		if err != nil {
			t.Fatal(err)
		}
		if run.Result == nil {
			t.Fatalf("%s: no answer: status %s, error %+v, interrupt %+v", c.locale, run.Status, run.Error, run.Interrupt)
		}
		ans := run.Result.Answer
		if ans != c.want {
			t.Errorf("%s answer:\n%s\nwant:\n%s", c.locale, ans, c.want)
		}
		for _, internal := range []string{"write_page", "post_it", "send_mail", "notes.create_page", "chat.post_message", "mail.send",
			"page_id", "page_url", "message_ts", "page_123\"", "1700000000", "mail-7", run.ID} {
			if strings.Contains(ans, internal) {
				t.Errorf("%s answer shows %q:\n%s", c.locale, internal, ans)
			}
		}
	}
}
