package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// templateTool renders {{key}} placeholders from payload.values, like the
// bundled text.template.
func templateTool() sdk.Tool {
	return tool("text.template", contracts.RiskRead,
		`{"type":"object","required":["template","values"],"properties":{"template":{"type":"string"},"values":{"type":"object"}}}`,
		`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`,
		map[string]string{"text": "$.text"},
		func(_ context.Context, c sdk.Call) (any, error) {
			text := c.Payload["template"].(string)
			for k, v := range c.Payload["values"].(map[string]any) {
				s, _ := v.(string)
				text = strings.ReplaceAll(text, "{{"+k+"}}", s)
			}
			return map[string]any{"text": text}, nil
		})
}

const bindingPlan = `{"version":"1.0","goal":"page then a sentence with its link","timezone":"UTC","actions":[
 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_url"],"inputs":{"title":"Notes"}},
 {"id":"a2","tool":"text.template","intent":"transform","requires":["page_url"],"produces":["text"],
  "inputs":{"template":"{{who}}: the notes are at {{page_url}}","values":VALUES},"input_bindings":{"values.page_url":"page_url"}},
 {"id":"a3","tool":"chat.post_message","intent":"notify","requires":["text"],"produces":["message_ts"],"inputs":{"channel":"#ops"},"input_bindings":{"text":"text"}}]}`

// A dotted input_bindings field sets a nested payload field, merged with
// the literal inputs of the same object, and the plan's inputs stay as written.
func TestInputBindingNestedPath(t *testing.T) {
	tt := newTools(t, notesTool(), templateTool(), chatTool())
	plan := mustPlan(t, strings.Replace(bindingPlan, "VALUES", `{"who":"Team"}`, 1))
	run, err := New(Config{}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: plan, Options: contracts.RunOptions{AutoApprove: true}})
	wantStatus(t, run, err, contracts.RunCompleted)
	vals := tt.Calls("text.template")[0].Payload["values"].(map[string]any)
	if vals["who"] != "Team" || vals["page_url"] != "https://notes.local/page_123" {
		t.Fatalf("values = %v", vals)
	}
	if got := tt.Calls("chat.post_message")[0].Payload["text"]; got != "Team: the notes are at https://notes.local/page_123" {
		t.Fatalf("posted %q", got)
	}
	stored, _ := json.Marshal(run.Plans[0].Plan.Actions[1].Inputs)
	if string(stored) != `{"template":"{{who}}: the notes are at {{page_url}}","values":{"who":"Team"}}` {
		t.Fatalf("the plan's inputs changed: %s", stored)
	}
}

// With no literal object, the binding creates it.
func TestInputBindingCreatesObject(t *testing.T) {
	tt := newTools(t, notesTool(), templateTool(), chatTool())
	js := strings.Replace(strings.Replace(bindingPlan, `,"values":VALUES`, "", 1), "{{who}}: t", "T", 1)
	run, err := New(Config{}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: mustPlan(t, js), Options: contracts.RunOptions{AutoApprove: true}})
	wantStatus(t, run, err, contracts.RunCompleted)
	if got := tt.Calls("chat.post_message")[0].Payload["text"]; got != "The notes are at https://notes.local/page_123" {
		t.Fatalf("posted %q", got)
	}
}

// A path with an empty segment fails the plan closed before any tool runs;
// a path through a literal that is not an object fails the step, naming it.
func TestInputBindingBadPaths(t *testing.T) {
	tt := newTools(t, notesTool(), templateTool(), chatTool())
	js := strings.Replace(strings.Replace(bindingPlan, "VALUES", `{}`, 1), `"values.page_url"`, `"values..page_url"`, 1)
	run, err := New(Config{}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: mustPlan(t, js)})
	wantStatus(t, run, err, contracts.RunFailed)
	if run.Error.Code != contracts.CodePlanFailed || fmt.Sprint(run.Error.Details["cause_code"]) != fmt.Sprint(int(contracts.CodeInvalidInput)) ||
		run.Error.Details["action"] != "a2" {
		t.Fatalf("error %+v (want cause_code 1000 and the cause's action a2)", run.Error)
	}
	if !strings.Contains(run.Error.Message, "values..page_url") || len(tt.Calls("")) != 0 {
		t.Fatalf("error %q, %d calls", run.Error.Message, len(tt.Calls("")))
	}

	js = strings.Replace(bindingPlan, "VALUES", `"not an object"`, 1)
	run, err = New(Config{OnFailure: contracts.OnFailureFail}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: mustPlan(t, js), Options: contracts.RunOptions{AutoApprove: true}})
	wantStatus(t, run, err, contracts.RunFailed)
	var failed *contracts.StepRecord
	for i := range run.Steps {
		if run.Steps[i].ActionID == "a2" && run.Steps[i].Status == contracts.StepFailed {
			failed = &run.Steps[i]
		}
	}
	if failed == nil || failed.Error.Code != contracts.CodeInvalidInput || failed.Error.Details["path"] != "values.page_url" || failed.Error.Details["action"] != "a2" {
		t.Fatalf("steps %+v", run.Steps)
	}
	if len(tt.Calls("text.template")) != 0 {
		t.Fatal("the template tool was called with a bad payload")
	}
}

// A binding path deeper than a payload may nest fails the plan closed
// before any tool runs. Before, 10,001 segments built a payload that no
// checkpoint could encode (encoding/json stops at 10,000 levels): the run
// stopped with an internal error, stuck at its last checkpoint. A
// person's or the critic's answer path is refused likewise; 64 levels are
// the most a payload may nest, so a 64-segment path binds.
func TestInputBindingPathDepthBounded(t *testing.T) {
	deep := func(n int) string { return "values" + strings.Repeat(".k", n-1) }
	for _, n := range []int{contracts.MaxJSONDepth + 1, 10001} {
		tt := newTools(t, notesTool(), templateTool(), chatTool())
		js := strings.Replace(strings.Replace(bindingPlan, "VALUES", `{}`, 1), `"values.page_url"`, `"`+deep(n)+`"`, 1)
		run, err := New(Config{}, Deps{Tools: tt, Store: newStore()}).Run(context.Background(), Request{Plan: mustPlan(t, js)})
		wantStatus(t, run, err, contracts.RunFailed)
		if run.Error.Code != contracts.CodePlanFailed || fmt.Sprint(run.Error.Details["cause_code"]) != fmt.Sprint(int(contracts.CodeInvalidInput)) ||
			run.Error.Details["action"] != "a2" || len(tt.Calls("")) != 0 {
			t.Fatalf("%d segments: error %+v, %d calls", n, run.Error, len(tt.Calls("")))
		}
	}
	if err := checkBindingPath("a2", deep(contracts.MaxJSONDepth)); err != nil {
		t.Fatalf("a path of %d segments: %v", contracts.MaxJSONDepth, err)
	}
	if _, err := applyAnswers(json.RawMessage(`{}`), map[string]any{"$." + deep(10001): "x"}); contracts.CodeOf(err) != contracts.CodeInvalidInput {
		t.Fatalf("a 10,001-segment answer path: %v", err)
	}
}

// FuzzSetPath: any path and any literal payload either bind or give a
// coded error; never a panic, and a bound value is found at its path.
func FuzzSetPath(f *testing.F) {
	f.Add(`{"values":{"who":"x"}}`, "values.page_url")
	f.Add(`{"values":"x"}`, "values.page_url")
	f.Add(`{}`, "a.b.c")
	f.Add(`{}`, "..")
	f.Fuzz(func(t *testing.T, payload, path string) {
		var obj map[string]any
		if json.Unmarshal([]byte(payload), &obj) != nil || obj == nil || checkBindingPath("a1", path) != nil {
			return
		}
		if err := setPath(obj, path, "V"); err != nil {
			if contracts.CodeOf(err) != contracts.CodeInvalidInput {
				t.Fatalf("uncoded error %v", err)
			}
			return
		}
		var cur any = obj
		for _, seg := range strings.Split(path, ".") {
			cur = cur.(map[string]any)[seg]
		}
		if cur != "V" {
			t.Fatalf("path %q holds %v", path, cur)
		}
	})
}

// Bindings that would copy more state into one payload than a call may
// carry fail the step before anything is copied, called or recorded: 17
// bindings of a 1 MiB result are refused, one is bound.
func TestBindingsCannotBuildAHugePayload(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	reader := tool("big.read", contracts.RiskRead, `{"type":"object"}`,
		`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`, map[string]string{"text": "$.text"},
		returns(map[string]any{"text": big}))
	for _, n := range []int{1, 17} {
		bindings := make([]string, n)
		for i := range bindings {
			bindings[i] = fmt.Sprintf(`"values.f%d":"text"`, i)
		}
		tt := newTools(t, reader, templateTool())
		plan := mustPlan(t, `{"version":"1.0","goal":"copy","timezone":"UTC","actions":[
 {"id":"a1","tool":"big.read","intent":"read","requires":[],"produces":["text"]},
 {"id":"a2","tool":"text.template","intent":"transform","requires":["text"],"produces":[],"inputs":{"template":"x","values":{}},"input_bindings":{`+strings.Join(bindings, ",")+`}}]}`)
		run, err := New(Config{OnFailure: contracts.OnFailureFail}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: plan})
		if n == 1 {
			wantStatus(t, run, err, contracts.RunCompleted)
			continue
		}
		wantStatus(t, run, err, contracts.RunFailed)
		if run.Error.Code != contracts.CodeInvalidInput || run.Error.Details["limit"] != contracts.MaxMessageBytes || len(tt.Calls("text.template")) != 0 {
			t.Fatalf("error %+v, %d template calls", run.Error, len(tt.Calls("text.template")))
		}
		for _, s := range run.Steps {
			if len(s.Payload) > 1<<10 && s.ActionID == "a2" {
				t.Fatalf("a2's record holds a payload of %d bytes", len(s.Payload))
			}
		}
	}
}
