package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

const weatherPlan = `{"version":"1.0","goal":"weather in Seoul","timezone":"Asia/Seoul","actions":[
 {"id":"a1","tool":"weather.get","intent":"read","requires":[],"produces":["forecast"],"inputs":{"city":"Seoul"},"success_criteria":["forecast non-empty"]}]}`

const searchPlan = `{"version":"1.0","goal":"weather in Seoul","timezone":"Asia/Seoul","actions":[
 {"id":"a1","tool":"web.search","intent":"search","requires":[],"produces":["results"],"inputs":{"query":"Seoul weather"}}]}`

func calls(run *contracts.Run) int {
	n := 0
	for role, c := range run.LLMCalls {
		if role != "tool" {
			n += c
		}
	}
	return n
}

// Seed 000 scenario "simple chat": a plan with no actions goes straight to
// the answer: planner + composer.
func TestSeed000SimpleChatTwoCalls(t *testing.T) {
	m, srv := scripted(t, planner(`{"version":"1.0","goal":"greet","timezone":"UTC","actions":[]}`), composer("Hello!"))
	tt := newTools(t, searchTool())
	run, err := New(Config{}, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "hi"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if run.Result.Answer != "Hello!" || calls(run) != 2 || srv.Count("") != 2 || len(tt.Calls("")) != 0 {
		t.Fatalf("answer=%q llm=%v server=%d", run.Result.Answer, run.LLMCalls, srv.Count(""))
	}
}

// Seed 000 scenario 1: one tool, two LLM calls.
func TestSeed000OneToolTwoCalls(t *testing.T) {
	m, srv := scripted(t, planner(weatherPlan), composer("Sunny, 15°C in Seoul."))
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "sunny 15C"})), searchTool())
	run, err := New(Config{}, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "weather in Seoul"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if calls(run) != 2 || srv.Count("") != 2 || stateOf(t, run, "forecast") != "sunny 15C" {
		t.Fatalf("llm=%v state=%v", run.LLMCalls, run.State)
	}
	if c := tt.Calls("weather.get"); len(c) != 1 || c[0].Payload["city"] != "Seoul" || !strings.HasPrefix(c[0].Key, run.ID+"/v1/a1/1") {
		t.Fatalf("calls = %+v", c)
	}
	if planReq := srv.Requests()[0].Messages[1].Content; !strings.Contains(planReq, `"tool":"weather.get"`) || !strings.Contains(planReq, `"timezone":"UTC"`) {
		t.Fatalf("planner input lacks candidates or timezone: %s", planReq)
	}
}

// Seed 000 scenario 2 (three tools): LLM calls do not grow with steps.
func TestSeed000ThreeToolsTwoCalls(t *testing.T) {
	m, srv := scripted(t, planner(`{"version":"1.0","goal":"note the weather","timezone":"UTC","actions":[
	 {"id":"a1","tool":"web.search","intent":"search","requires":[],"produces":["results"],"inputs":{"query":"weather"}},
	 {"id":"a2","tool":"notes.create_page","intent":"write","requires":["results"],"produces":["page_url"],"inputs":{"title":"Weather"},"input_bindings":{"content":"results"}},
	 {"id":"a3","tool":"chat.post_message","intent":"notify","requires":["page_url"],"produces":["message_ts"],"inputs":{"channel":"#general"},"input_bindings":{"text":"page_url"},"success_criteria":["message_ts exists"]}]}`),
		composer("Noted and shared."))
	tt := newTools(t, searchTool(), notesTool(), chatTool())
	run, err := New(Config{}, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "note the weather and share it"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if calls(run) != 2 || srv.Count("") != 2 || len(tt.Calls("")) != 3 {
		t.Fatalf("llm=%v calls=%d", run.LLMCalls, len(tt.Calls("")))
	}
	if n := tt.Calls("notes.create_page")[0].Payload["content"]; n != "found: weather" {
		t.Fatalf("binding lost: %v", n)
	}
}

// Seed 000 scenario 3: the tool fails, one re-plan recovers: 3 calls.
func TestSeed000FailureRecoveredByReplanThreeCalls(t *testing.T) {
	m, srv := scripted(t, planner(weatherPlan), replanner(searchPlan), composer("Seoul: found."))
	failing := weatherTool(func(context.Context, sdk.Call) (any, error) {
		return nil, sdk.ToolError(false, "API rate limit exceeded")
	})
	tt := newTools(t, failing, searchTool())
	run, err := New(Config{}, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "weather in Seoul"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if calls(run) != 3 || srv.Count("") != 3 || run.ReplanCount != 1 || len(run.Plans) != 2 {
		t.Fatalf("llm=%v replans=%d plans=%d", run.LLMCalls, run.ReplanCount, len(run.Plans))
	}
	// The re-planner saw the failure in past_steps.
	var rp string
	for _, r := range srv.Requests() {
		if r.Role == "replanner" {
			rp = r.Messages[1].Content
		}
	}
	if !strings.Contains(rp, "rate limit") || !strings.Contains(rp, `"status":"failed"`) {
		t.Fatalf("replanner input lacks the failure: %s", rp)
	}
	if run.Steps[0].Status != contracts.StepFailed || run.Steps[0].Error.Code != contracts.CodeToolFailed {
		t.Fatalf("audit trail: %+v", run.Steps)
	}
}

// Seed 000 scenario 4: invalid plan JSON fails closed after 1 call.
func TestSeed000InvalidPlanJSONOneCall(t *testing.T) {
	m, srv := scripted(t, planner(`Sure! {"version": "1.0", "actions": [`), composer("unused"))
	tt := newTools(t, searchTool())
	run, err := New(Config{}, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "something complex"})
	wantStatus(t, run, err, contracts.RunFailed)
	if run.Error.Code != contracts.CodePlanFailed || calls(run) != 1 || srv.Count("") != 1 || len(tt.Calls("")) != 0 {
		t.Fatalf("error=%+v llm=%v", run.Error, run.LLMCalls)
	}
	if run.Result == nil || !strings.Contains(run.Result.Answer, "Could not finish") {
		t.Fatalf("no fail-closed answer: %+v", run.Result)
	}
}

// Seed 004 scenario 1: notes.create_page -> chat.post_message using page_url.
func TestSeed004NotesThenChat(t *testing.T) {
	m, _ := scripted(t, planner(`{"version":"1.0","goal":"meeting notes then share","timezone":"Asia/Seoul","actions":[
	 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_url","page_id"],"inputs":{"title":"Meeting notes - 2026-02-28 15:00"},"success_criteria":["page_url exists"]},
	 {"id":"a2","tool":"chat.post_message","intent":"notify","requires":["page_url"],"produces":["message_ts"],"inputs":{"channel":"#general"},"success_criteria":["message_ts exists"]}]}`),
		llmtest.Reply{Role: "filler", Content: `{"channel":"#general","text":"Meeting notes created: https://notes.local/page_123"}`},
		composer("Created the notes and shared the link https://notes.local/page_123"))
	tt := newTools(t, notesTool(), chatTool())
	run, err := New(Config{}, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "create meeting notes tomorrow 3pm and share in chat"})
	wantStatus(t, run, err, contracts.RunCompleted)
	msg := tt.Calls("chat.post_message")[0].Payload
	if msg["channel"] != "#general" || !strings.Contains(msg["text"].(string), "https://notes.local/page_123") {
		t.Fatalf("message = %v", msg)
	}
	if run.LLMCalls["filler"] != 1 || run.LLMCalls["planner"] != 1 || run.LLMCalls["composer"] != 1 {
		t.Fatalf("llm calls = %v", run.LLMCalls)
	}
}

// Seed 004 scenario 2: the verifier finds summary missing, the re-plan
// adds a summarising step with llm.summarize, and the run succeeds.
func TestSeed004MissingSummaryReplansWithSummarize(t *testing.T) {
	m, srv := scripted(t,
		planner(`{"version":"1.0","goal":"last week's sales summary to chat","timezone":"UTC","actions":[
		 {"id":"a1","tool":"sheets.get_range","intent":"read","requires":[],"produces":["records","summary"],"inputs":{"range":"Sales!A1:B8"}},
		 {"id":"a2","tool":"chat.post_message","intent":"notify","requires":["summary"],"produces":["message_ts"],"inputs":{"channel":"#sales"},"input_bindings":{"text":"summary"}}]}`),
		replanner(`{"version":"1.0","goal":"summarise then post","timezone":"UTC","actions":[
		 {"id":"b1","tool":"llm.summarize","intent":"summarize","requires":["records"],"produces":["summary"],"success_criteria":["summary non-empty"]},
		 {"id":"b2","tool":"chat.post_message","intent":"notify","requires":["summary"],"produces":["message_ts"],"inputs":{"channel":"#sales"},"input_bindings":{"text":"summary"}}]}`),
		llmtest.Reply{Role: "tool", Content: "Sales: 200 over two days, Monday strongest."},
		composer("Posted last week's sales summary."))
	tt := newTools(t, append(builtins(m), sheetsTool(), chatTool())...)
	run, err := New(Config{}, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "get last week's sales from the sheet and summarise to chat"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if run.ReplanCount != 1 || run.Steps[0].Error == nil || run.Steps[0].Error.Code != contracts.CodeMissingPath {
		t.Fatalf("replans=%d steps=%+v", run.ReplanCount, run.Steps)
	}
	if got := tt.Calls("chat.post_message")[0].Payload["text"]; got != "Sales: 200 over two days, Monday strongest." {
		t.Fatalf("posted %v", got)
	}
	if len(tt.Calls("sheets.get_range")) != 1 {
		t.Fatal("the re-plan repeated a step that succeeded")
	}
	// Orchestration calls: planner + replanner + composer; the tool's own call apart.
	if calls(run) != 3 || run.LLMCalls["tool"] != 1 || srv.Count("tool") != 1 {
		t.Fatalf("llm calls = %v", run.LLMCalls)
	}
}

func TestPolicyDenyStopsBeforeAnyTool(t *testing.T) {
	plan := `{"version":"1.0","goal":"share","timezone":"UTC","actions":[
	 {"id":"a1","tool":"web.search","intent":"search","requires":[],"produces":["results"],"inputs":{"query":"x"}},
	 {"id":"a2","tool":"chat.post_message","intent":"notify","requires":["results"],"produces":[],"inputs":{"channel":"#c"},"input_bindings":{"text":"results"}}]}`
	scoped := chatTool()
	scoped.Contract.ScopesRequired = []string{"chat:write"}
	for _, tc := range []struct {
		name   string
		cfg    PolicyConfig
		scopes []string
		reason string
	}{
		{"missing scope", PolicyConfig{}, []string{"search"}, "missing scope chat:write"},
		{"tenant denies external send", PolicyConfig{DenyExternalSend: true}, []string{"chat:write"}, "tenant denies external_send"},
		{"tenant denies tool", PolicyConfig{DenyTools: []string{"chat."}}, []string{"chat:write"}, "tenant denies tool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := newTools(t, searchTool(), scoped)
			e := New(Config{Policy: tc.cfg}, Deps{Tools: tt})
			run, err := e.Run(context.Background(), Request{Plan: mustPlan(t, plan), Options: contracts.RunOptions{Scopes: tc.scopes}})
			wantStatus(t, run, err, contracts.RunFailed)
			if run.Error.Code != contracts.CodePolicyDenied || !strings.Contains(run.Error.Message, tc.reason) || len(tt.Calls("")) != 0 {
				t.Fatalf("error=%+v calls=%d", run.Error, len(tt.Calls("")))
			}
			if run.Policy["a2"].Decision != contracts.PolicyDeny || run.Policy["a1"].Decision != contracts.PolicyAllow {
				t.Fatalf("policy = %+v", run.Policy)
			}
		})
	}
	t.Run("scopes granted run", func(t *testing.T) {
		tt := newTools(t, searchTool(), scoped)
		run, err := New(Config{}, Deps{Tools: tt}).Run(context.Background(), Request{Plan: mustPlan(t, plan), Options: contracts.RunOptions{Scopes: []string{"chat:write"}}})
		wantStatus(t, run, err, contracts.RunCompleted)
		if run.Result.Composer != "template" || len(tt.Calls("")) != 2 {
			t.Fatalf("result=%+v", run.Result)
		}
	})
}

// An engine with no model of its own plans and composes with the model a
// call brings (WithModel: an MCP client's, through sampling), and the same
// engine without it refuses a goal (4004): one engine serves both, so its
// leases, budgets and steering cover runs planned with a caller's model.
func TestWithModelPlansWithTheCallersModel(t *testing.T) {
	m, srv := scripted(t, planner(weatherPlan), composer("Sunny."))
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "sunny"})), searchTool())
	e := New(Config{}, Deps{Tools: tt})
	if _, err := e.Run(context.Background(), Request{Goal: "weather in Seoul"}); contracts.CodeOf(err) != contracts.CodeNoLLM {
		t.Fatalf("without a model: %v, want 4004", err)
	}
	run, err := e.Run(WithModel(context.Background(), m), Request{Goal: "weather in Seoul"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if run.Result.Answer != "Sunny." || srv.Count("planner") != 1 || srv.Count("composer") != 1 {
		t.Fatalf("answer=%q llm=%v", run.Result.Answer, run.LLMCalls)
	}
}
