package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/memory/patterns"
	"github.com/ordo-run/ordo/plugins/sdk"
)

const cityQuestion = `{"version":"1.0","goal":"?","timezone":"UTC","actions":[],"clarification_questions":["Which city?"]}`

// withMemory adds a real in-memory pattern store and its collector.
func withMemory(t *testing.T, d Deps) (Deps, *patterns.Memory) {
	t.Helper()
	m, err := patterns.Open("", nil, patterns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := patterns.NewCollector(m, patterns.CollectorOptions{})
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	d.Memory, d.Collector = m, c
	return d, m
}

func flush(t *testing.T, d Deps) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := d.Collector.(*patterns.Collector).Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// plannerInput decodes the user message of the i-th planner request.
func plannerInput(t *testing.T, srv *llmtest.Server, i int) map[string]any {
	t.Helper()
	var reqs []llmtest.Request
	for _, r := range srv.Requests() {
		if r.Role == "planner" {
			reqs = append(reqs, r)
		}
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(reqs[i].Messages[1].Content), &in); err != nil {
		t.Fatal(err)
	}
	return in
}

func answer(city, by string) contracts.Decision {
	return contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"Which city?": city}, By: by}
}

// TestSecondRunOfSameGoalUsesMemory: a goal that needed a clarification and
// a plan; the second run of it gets the plan as an example and the answer as
// a suggestion, and a third engine with memory switched off gets neither.
func TestSecondRunOfSameGoalUsesMemory(t *testing.T) {
	ctx := t.Context()
	m, srv := scripted(t,
		planner(cityQuestion), planner(weatherPlan),
		planner(cityQuestion), planner(weatherPlan),
		planner(cityQuestion))
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "sunny"})))
	deps, mem := withMemory(t, Deps{Tools: tt, LLM: m, Store: newStore()})
	cfg := Config{HITL: hitlOn, Memory: MemoryConfig{Collect: true, Examples: 3, Clarification: true, ToolAdvice: true}}
	e := New(cfg, deps)
	req := Request{Goal: "what is the weather", UserID: "ann", Options: contracts.RunOptions{AutoApprove: true}}

	run, err := e.Run(ctx, req)
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Suggestions != nil {
		t.Fatalf("empty memory suggested %v", run.Interrupt.Suggestions)
	}
	if _, ok := plannerInput(t, srv, 0)["past_plans"]; ok {
		t.Fatal("empty memory gave the planner past plans")
	}
	run, err = e.Resume(ctx, run.ID, answer("Seoul", "ann"))
	wantStatus(t, run, err, contracts.RunCompleted)
	flush(t, deps)
	if n := len(must(mem.List(ctx, "ann", ""))); n != 3 { // plan, tool, clarification
		t.Fatalf("the finished run left %d records", n)
	}

	run, err = e.Run(ctx, req)
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Suggestions["Which city?"] != "Seoul" {
		t.Fatalf("second run was not offered the remembered answer: %+v", run.Interrupt)
	}
	past, _ := json.Marshal(plannerInput(t, srv, 2)["past_plans"])
	if !strings.Contains(string(past), `"tool":"weather.get"`) || !strings.Contains(string(past), `"goal":"what is the weather"`) {
		t.Fatalf("the planner did not get the past plan: %s", past)
	}
	run, err = e.Resume(ctx, run.ID, answer("Seoul", "ann"))
	wantStatus(t, run, err, contracts.RunCompleted)
	flush(t, deps)
	p := must(mem.List(ctx, "ann", patterns.NSPlan))
	if len(p) != 1 || p[0].Successes != 2 {
		t.Fatalf("the second run did not consolidate into the first's plan record: %+v", p)
	}

	off := New(Config{HITL: hitlOn}, deps)
	run, err = off.Run(ctx, req)
	wantStatus(t, run, err, contracts.RunInterrupted)
	if _, ok := plannerInput(t, srv, 4)["past_plans"]; ok || run.Interrupt.Suggestions != nil {
		t.Fatalf("memory switched off still used: %+v", run.Interrupt)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestClarificationReusedAutomatically: once the same answer was given and
// worked six times (reuse_count 5, confidence 1), the next run is answered
// by memory before planning, and the run records that memory answered.
func TestClarificationReusedAutomatically(t *testing.T) {
	ctx := t.Context()
	m, srv := scripted(t)
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "sunny"})))
	deps, mem := withMemory(t, Deps{Tools: tt, LLM: m, Store: newStore()})
	e := New(Config{HITL: hitlOn, Memory: MemoryConfig{Collect: true, Clarification: true}}, deps)
	req := Request{Goal: "what is the weather", UserID: "ann", Options: contracts.RunOptions{AutoApprove: true}}
	for i := range 6 {
		srv.Push(planner(cityQuestion), planner(weatherPlan))
		run, err := e.Run(ctx, req)
		wantStatus(t, run, err, contracts.RunInterrupted)
		if (i > 0) != (run.Interrupt.Suggestions["Which city?"] == "Seoul") {
			t.Fatalf("run %d suggestions %v", i, run.Interrupt.Suggestions)
		}
		run, err = e.Resume(ctx, run.ID, answer("Seoul", "ann"))
		wantStatus(t, run, err, contracts.RunCompleted)
		flush(t, deps)
	}
	c := must(mem.Clarification(ctx, "ann", req.Goal))
	if c.ReuseCount != 5 || !c.Auto {
		t.Fatalf("after six identical answers: %+v", c)
	}

	before := srv.Count("planner")
	srv.Push(planner(weatherPlan))
	run, err := e.Run(ctx, req)
	wantStatus(t, run, err, contracts.RunCompleted)
	d := run.Decisions[0]
	if d.Interrupt.Kind != contracts.InterruptClarify || d.Decision.By != DecidedByMemory || d.Decision.Answers["Which city?"] != "Seoul" {
		t.Fatalf("memory's answer not recorded: %+v", run.Decisions)
	}
	if srv.Count("planner") != before+1 || !strings.Contains(plannerInput(t, srv, before)["user_request"].(string), "Which city?: Seoul") {
		t.Fatal("the planner was not given the remembered answer in one call")
	}
	// Switched off, the same memory only suggests.
	srv.Push(planner(cityQuestion))
	run, err = New(Config{HITL: hitlOn}, deps).Run(ctx, req)
	wantStatus(t, run, err, contracts.RunInterrupted)
}

// TestStepAutoApprovedByMemory: after five approvals of weather.get the
// sixth step approval is answered by memory when switched on; a policy
// confirmation never is.
func TestStepAutoApprovedByMemory(t *testing.T) {
	ctx := t.Context()
	stepOn := contracts.HITLSwitches{Enabled: true, StepApproval: true}
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "sunny"})), notesTool(), chatTool())
	deps, _ := withMemory(t, Deps{Tools: tt, Store: newStore()})
	cfg := Config{HITL: stepOn, Policy: PolicyConfig{ConfirmTools: []string{"chat."}}, Memory: MemoryConfig{Collect: true, AutoApprove: true}}
	e := New(cfg, deps)
	runOnce := func(e *Engine, plan string, approve int) *contracts.Run {
		run, err := e.Run(ctx, Request{Plan: mustPlan(t, plan), UserID: "ann"})
		for range approve {
			wantStatus(t, run, err, contracts.RunInterrupted)
			run, err = e.Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "ann"})
		}
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	for range 5 {
		wantStatus(t, runOnce(e, weatherPlan, 1), nil, contracts.RunCompleted)
		wantStatus(t, runOnce(e, notesChatPlan, 2), nil, contracts.RunCompleted)
	}
	flush(t, deps)

	run := runOnce(e, weatherPlan, 0)
	wantStatus(t, run, nil, contracts.RunCompleted)
	d := run.Decisions[0]
	if d.Decision.By != DecidedByMemory || d.Interrupt.Kind != contracts.InterruptStepApproval || !strings.Contains(d.Decision.Note, "probability 1.00 from 5") {
		t.Fatalf("auto-approval not recorded as memory's: %+v", run.Decisions)
	}
	// notes.create_page is auto-approved; chat.post_message needs policy's
	// confirmation, which memory never gives.
	run = runOnce(e, notesChatPlan, 0)
	wantStatus(t, run, nil, contracts.RunInterrupted)
	if run.Interrupt.Tool != "chat.post_message" || run.Decisions[0].Decision.By != DecidedByMemory {
		t.Fatalf("interrupt %+v decisions %+v", run.Interrupt, run.Decisions)
	}
	// Switched off: asks again.
	run = runOnce(New(Config{HITL: stepOn}, deps), weatherPlan, 0)
	wantStatus(t, run, nil, contracts.RunInterrupted)
}

// TestToolAdviceShapesCandidates: with a real recommender choosing two of
// five tools, memory drops the top tool, which kept failing for this goal,
// and lifts one that worked above the one that would lead without it.
func TestToolAdviceShapesCandidates(t *testing.T) {
	ctx := t.Context()
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "sunny"})), searchTool(), notesTool(), chatTool(), sheetsTool())
	rec := indexed(t, tt)
	goal := "get the weather forecast: search Seoul"
	m, srv := scripted(t, planner(weatherPlan), planner(weatherPlan))
	deps, mem := withMemory(t, Deps{Tools: tt, LLM: m, Store: newStore(), Recommender: rec})
	finished := func(tool string, ok bool) *contracts.Run {
		st := contracts.StepSucceeded
		status := contracts.RunCompleted
		if !ok {
			st, status = contracts.StepFailed, contracts.RunFailed
		}
		return &contracts.Run{UserID: "ann", Goal: goal, Status: status,
			Plans: []contracts.PlanRevision{{Version: 1, Plan: contracts.Plan{Actions: []contracts.Action{{ID: "a1", Tool: tool, Intent: "look it up"}}}}},
			Steps: []contracts.StepRecord{{ActionID: "a1", Tool: tool, PlanVersion: 1, Status: st, StartedAt: time.Unix(0, 0), EndedAt: time.Unix(1, 0)}}}
	}
	for range 3 {
		if err := mem.Collect(ctx, finished("weather.get", false)); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		if err := mem.Collect(ctx, finished("notes.create_page", true)); err != nil {
			t.Fatal(err)
		}
	}
	cands := func(i int) []string {
		var out []string
		for _, c := range plannerInput(t, srv, i)["tool_candidates"].([]any) {
			out = append(out, c.(map[string]any)["tool"].(string))
		}
		return out
	}
	req := Request{Goal: goal, UserID: "ann", Options: contracts.RunOptions{AutoApprove: true}}
	run, err := New(Config{CandidatesK: 2, AllToolsMax: -1}, deps).Run(ctx, req)
	wantStatus(t, run, err, contracts.RunCompleted)
	plain := cands(0)
	run, err = New(Config{CandidatesK: 2, AllToolsMax: -1, Memory: MemoryConfig{ToolAdvice: true}}, deps).Run(ctx, req)
	wantStatus(t, run, err, contracts.RunCompleted)
	advised := cands(1)
	if !slices.Equal(plain, []string{"weather.get", "web.search"}) {
		t.Fatalf("the test needs weather.get then web.search as the plain top 2: %v", plain)
	}
	// Advice drops the avoided tool and boosts the one that worked into the
	// top K; the order within the top K is the recommender's business.
	if slices.Contains(advised, "weather.get") || !slices.Contains(advised, "notes.create_page") {
		t.Fatalf("memory did not shape the candidates: plain %v, advised %v", plain, advised)
	}
}

// TestRunTemplate: a completed run's plan saved as a template runs again
// with new inputs and no model.
func TestRunTemplate(t *testing.T) {
	ctx := t.Context()
	var cities []string
	tt := newTools(t, weatherTool(func(_ context.Context, c sdk.Call) (any, error) {
		cities = append(cities, c.Payload["city"].(string))
		return map[string]any{"forecast": "sunny"}, nil
	}))
	deps, _ := withMemory(t, Deps{Tools: tt, Store: newStore()})
	e := New(Config{}, deps)
	run, err := e.Run(ctx, Request{Plan: mustPlan(t, weatherPlan), UserID: "ann"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if err := e.SaveTemplate(ctx, run.ID, "forecast"); err != nil {
		t.Fatal(err)
	}
	run, err = e.RunTemplate(ctx, TemplateRequest{Name: "forecast", UserID: "ann", Goal: "weather in Busan", Inputs: map[string]any{"a1.city": "Busan"}})
	wantStatus(t, run, err, contracts.RunCompleted)
	if !slices.Equal(cities, []string{"Seoul", "Busan"}) || run.Plans[0].Source != "template" || run.Goal != "weather in Busan" {
		t.Fatalf("cities %v, source %s, goal %q", cities, run.Plans[0].Source, run.Goal)
	}
	_, err = e.RunTemplate(ctx, TemplateRequest{Name: "forecast", UserID: "ann", Inputs: map[string]any{"a9.city": "Busan"}})
	testerr.Field(t, err, contracts.CodeInvalidInput, "inputs")
	_, err = e.RunTemplate(ctx, TemplateRequest{Name: "forecast", UserID: "ann", Inputs: map[string]any{"a1.city.": "Busan"}})
	testerr.Field(t, err, contracts.CodeInvalidInput, "inputs")
	_, err = e.RunTemplate(ctx, TemplateRequest{Name: "forecast", UserID: "ann", Inputs: map[string]any{"a1.city.name": "Busan"}})
	testerr.Field(t, err, contracts.CodeInvalidInput, "inputs") // city is a string in the template, not an object
	// PlanTemplate stops before any tool runs, asking for approval where configured.
	planned, err := New(DefaultConfig(), deps).PlanTemplate(ctx, TemplateRequest{Name: "forecast", UserID: "ann", Inputs: map[string]any{"a1.city": "Jeju"}})
	wantStatus(t, planned, err, contracts.RunInterrupted)
	if planned.Interrupt.Kind != contracts.InterruptPlanApproval || planned.Plans[0].Plan.Actions[0].Inputs["city"] != "Jeju" || len(cities) != 2 {
		t.Fatalf("planned %+v, cities %v", planned.Interrupt, cities)
	}
	_, err = e.RunTemplate(ctx, TemplateRequest{Name: "forecast", UserID: "bob"})
	testerr.Field(t, err, contracts.CodeInvalidInput, "name")
	failed, _ := e.Run(ctx, Request{Plan: mustPlan(t, searchPlan), UserID: "ann"}) // web.search is not in this catalog
	testerr.Field(t, e.SaveTemplate(ctx, failed.ID, "x"), contracts.CodeInvalidInput, "run")
	if len(cities) != 2 {
		t.Fatalf("a refused template run called tools: %v", cities)
	}
	_, err = New(Config{}, Deps{Tools: tt}).RunTemplate(ctx, TemplateRequest{Name: "forecast"})
	testerr.Field(t, err, contracts.CodeInvalidConfig, "memory")
}

// FuzzApplyInputs: any input key either sets ACTION_ID.FIELD (a dotted path) or is refused
// with a coded error naming "inputs", leaving the plan as it was.
func FuzzApplyInputs(f *testing.F) {
	for _, k := range []string{"a1.city", "a1.", ".city", "a1", "a9.city", "a1.a.b", "", "a1..x"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		p := clonePlan(mustPlan(t, weatherPlan))
		before, _ := json.Marshal(p)
		err := applyInputs(&p, map[string]any{key: "v"})
		after, _ := json.Marshal(p)
		if err != nil {
			if ce := contracts.AsError(err); ce.Code != contracts.CodeInvalidInput || ce.Details["field"] != "inputs" || string(before) != string(after) {
				t.Fatalf("refusal %v changed the plan or is uncoded", err)
			}
			return
		}
		id, field, _ := strings.Cut(key, ".")
		var at any = p.Actions[0].Inputs
		for _, seg := range strings.Split(field, ".") { // FIELD may be a dotted path
			at = at.(map[string]any)[seg]
		}
		if id != "a1" || at != "v" {
			t.Fatalf("%q applied as %+v", key, p.Actions[0].Inputs)
		}
	})
}

// A person's answers to a tool's missing inputs are offered the next time
// that tool asks for them (memory.clarification), over every surface that
// shows the interrupt; what they typed into a secret field is never kept.
func TestInputAnswersComeBackAsSuggestions(t *testing.T) {
	ctx := context.Background()
	vault := tool("vault.put", contracts.RiskWrite,
		`{"type":"object","required":["key","token"],"properties":{"key":{"type":"string"},"token":{"type":"string"}}}`,
		`{"type":"object"}`, nil, returns(map[string]any{}))
	vault.Contract.SecretFields = []string{"token"}
	tt := newTools(t, chatTool(), vault)
	deps, mem := withMemory(t, Deps{Tools: tt, Store: newStore()})
	e := New(Config{Memory: MemoryConfig{Collect: true, Clarification: true}}, deps)
	chat := `{"version":"1.0","goal":"post","timezone":"UTC","actions":[
	 {"id":"a1","tool":"chat.post_message","intent":"notify","requires":[],"produces":[],"inputs":{"text":"hello"}}]}`
	put := `{"version":"1.0","goal":"store","timezone":"UTC","actions":[
	 {"id":"a1","tool":"vault.put","intent":"write","requires":[],"produces":[],"inputs":{}}]}`
	run := func(plan string, answers map[string]any) *contracts.Run {
		t.Helper()
		r, err := e.Run(ctx, Request{Plan: mustPlan(t, plan), UserID: "ann"})
		wantStatus(t, r, err, contracts.RunInterrupted)
		if answers == nil {
			return r
		}
		r, err = e.Resume(ctx, r.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: answers, By: "ann"})
		wantStatus(t, r, err, contracts.RunCompleted)
		return r
	}
	if r := run(chat, map[string]any{"$.channel": "#general"}); r.Decisions[0].Interrupt.Suggestions != nil {
		t.Fatalf("suggestions before any answer: %v", r.Decisions[0].Interrupt.Suggestions)
	}
	run(put, map[string]any{"$.key": "k1", "$.token": "s3cret-token"})
	flush(t, deps)

	if s := run(chat, nil).Interrupt.Suggestions; len(s) != 1 || s["$.channel"] != "#general" {
		t.Fatalf("chat suggestions = %v", s)
	}
	if s := run(put, nil).Interrupt.Suggestions; len(s) != 1 || s["$.key"] != "k1" {
		t.Fatalf("vault suggestions = %v (the token must not be offered)", s)
	}
	records, err := mem.List(ctx, "ann", patterns.NSBehavior)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(records); len(records) != 2 || strings.Contains(string(raw), "s3cret") {
		t.Fatalf("memory kept %s", raw)
	}
}
