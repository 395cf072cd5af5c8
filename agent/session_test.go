package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// modelInput decodes the JSON input of the i-th call for role.
func modelInput(t *testing.T, srv *llmtest.Server, role string, i int) map[string]any {
	t.Helper()
	n := 0
	for _, r := range srv.Requests() {
		if r.Role != role {
			continue
		}
		if n == i {
			var in map[string]any
			if err := json.Unmarshal([]byte(r.Messages[len(r.Messages)-1].Content), &in); err != nil {
				t.Fatalf("%s input: %v", role, err)
			}
			return in
		}
		n++
	}
	t.Fatalf("no %s call %d", role, i)
	return nil
}

// turnsIn are the goals and answers of a model input's conversation.
func turnsIn(in map[string]any) []string {
	var out []string
	turns, _ := in["conversation"].([]any)
	for _, t := range turns {
		m := t.(map[string]any)
		out = append(out, m["goal"].(string)+" => "+m["answer"].(string))
	}
	return out
}

// Two runs in one session: the second turn's planner and composer see the
// first turn's goal and answer; a goal that needs no tool (the planner
// answers with no actions) is answered by the composer in the
// conversation. Another user's session of the same name is another
// conversation, and its turns are not shown.
func TestSessionTurnsReachPlannerAndComposer(t *testing.T) {
	ctx := context.Background()
	m, srv := scripted(t,
		planner(weatherPlan), composer("Sunny in Seoul."),
		planner(`{"version":"1.0","goal":"and tomorrow?","timezone":"UTC","actions":[]}`), composer("Tomorrow looks sunny too."),
		planner(`{"version":"1.0","goal":"hi","timezone":"UTC","actions":[]}`), composer("Hello."))
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "sunny"})))
	store := newStore()
	e := New(Config{}, Deps{Tools: tt, LLM: m, Store: store})
	first, err := e.Run(ctx, Request{Goal: "weather in Seoul", UserID: "ana", Session: "trip"})
	wantStatus(t, first, err, contracts.RunCompleted)
	if first.SessionID != "trip" || len(first.Conversation) != 0 {
		t.Fatalf("first turn: session %q, conversation %+v", first.SessionID, first.Conversation)
	}
	if _, ok := modelInput(t, srv, "planner", 0)["conversation"]; ok {
		t.Fatal("the first turn's planner was given a conversation")
	}

	second, err := e.Run(ctx, Request{Goal: "and tomorrow?", UserID: "ana", Session: "trip"})
	wantStatus(t, second, err, contracts.RunCompleted)
	want := []string{"weather in Seoul => Sunny in Seoul."}
	for _, role := range []string{"planner", "composer"} {
		if got := turnsIn(modelInput(t, srv, role, 1)); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("second turn's %s saw %v, want %v", role, got, want)
		}
	}
	if second.Result.Answer != "Tomorrow looks sunny too." || len(second.Steps) != 0 {
		t.Fatalf("no-tool turn: answer %q, steps %d", second.Result.Answer, len(second.Steps))
	}
	// The conversation is in the record: a fresh engine sees what the models saw.
	got, err := New(Config{}, Deps{Tools: tt, Store: store}).Get(ctx, second.ID)
	if err != nil || len(got.Conversation) != 1 || got.Conversation[0].RunID != first.ID {
		t.Fatalf("stored conversation %+v, err %v", got.Conversation, err)
	}

	other, err := e.Run(ctx, Request{Goal: "hi", UserID: "bo", Session: "trip"})
	wantStatus(t, other, err, contracts.RunCompleted)
	if turns := turnsIn(modelInput(t, srv, "planner", 2)); len(turns) != 0 {
		t.Fatalf("bo's session shows ana's turns: %v", turns)
	}

	s, err := e.GetSession(ctx, "ana", "trip", 0)
	if err != nil || len(s.Turns) != 2 || s.Turns[0].RunID != first.ID || s.Turns[1].Answer != "Tomorrow looks sunny too." {
		t.Fatalf("session %+v, err %v", s, err)
	}
	if _, err := e.GetSession(ctx, "bo", "work", 0); contracts.CodeOf(err) != contracts.CodeRunNotFound {
		t.Fatalf("unknown session: %v", err)
	}
	list, err := e.Sessions(ctx, "ana", 0)
	if err != nil || len(list) != 1 || list[0].ID != "trip" || list[0].Turns != 2 || list[0].LastGoal != "and tomorrow?" {
		t.Fatalf("sessions %+v, err %v", list, err)
	}
}

// Only the last SessionTurns turns are given, oldest first.
func TestSessionKeepsTheLastTenTurns(t *testing.T) {
	ctx := context.Background()
	var replies []llmtest.Reply
	for range SessionTurns + 2 {
		replies = append(replies, planner(`{"version":"1.0","goal":"g","timezone":"UTC","actions":[]}`), composer("ok"))
	}
	m, srv := scripted(t, replies...)
	e := New(Config{}, Deps{Tools: newTools(t), LLM: m, Store: newStore()})
	for i := range SessionTurns + 2 {
		run, err := e.Run(ctx, Request{Goal: "turn " + string(rune('a'+i)), UserID: "ana", Session: "long"})
		wantStatus(t, run, err, contracts.RunCompleted)
	}
	got := turnsIn(modelInput(t, srv, "planner", SessionTurns+1))
	if len(got) != SessionTurns || got[0] != "turn b => ok" || got[SessionTurns-1] != "turn k => ok" {
		t.Fatalf("last planner saw %v", got)
	}
}

// The caller's context survives clarification (the second planning sees
// it) and reaches the re-planner and the composer.
func TestContextSurvivesClarificationAndReachesReplannerAndComposer(t *testing.T) {
	ctx := context.Background()
	m, srv := scripted(t,
		planner(`{"version":"1.0","goal":"?","timezone":"UTC","actions":[],"clarification_questions":["Which city?"]}`),
		planner(weatherPlan), replanner(searchPlan), composer("Seoul: found."))
	failing := weatherTool(func(context.Context, sdk.Call) (any, error) {
		return nil, sdk.ToolError(false, "API rate limit exceeded")
	})
	tt := newTools(t, failing, searchTool())
	store := newStore()
	const facts = "the user flies to Seoul on Friday"
	run, err := fresh(Config{HITL: hitlOn}, tt, store, Deps{LLM: m}).Run(ctx, Request{Goal: "weather?", Context: facts, UserID: "ana",
		Options: contracts.RunOptions{AutoApprove: true}})
	wantStatus(t, run, err, contracts.RunInterrupted)
	run, err = fresh(Config{HITL: hitlOn}, tt, store, Deps{LLM: m}).Resume(ctx, run.ID,
		contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"Which city?": "Seoul"}, By: "ana"})
	wantStatus(t, run, err, contracts.RunCompleted)
	for _, c := range []struct {
		role string
		i    int
	}{{"planner", 0}, {"planner", 1}, {"replanner", 0}, {"composer", 0}} {
		if got := modelInput(t, srv, c.role, c.i)["context"]; got != facts {
			t.Errorf("%s call %d saw context %v", c.role, c.i, got)
		}
	}
}

// A context or session that cannot be kept is refused with a coded error
// and no run: none is cut or dropped silently.
func TestContextAndSessionRefusedNotLost(t *testing.T) {
	ctx := context.Background()
	m, _ := scripted(t)
	tt := newTools(t, notesTool())
	plan := mustPlan(t, `{"version":"1.0","goal":"note","timezone":"UTC","actions":[
	 {"id":"n","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_id"],"inputs":{"title":"x"}}]}`)
	cases := []struct {
		name  string
		e     *Engine
		req   Request
		field string
	}{
		{"context without a model to read it", New(Config{}, Deps{Tools: tt}), Request{Plan: plan, Context: "facts", UserID: "ana"}, "context"},
		{"context over the limit", New(Config{}, Deps{Tools: tt, LLM: m}), Request{Goal: "g", Context: strings.Repeat("x", MaxContext+1), UserID: "ana"}, "context"},
		{"session without a user", New(Config{}, Deps{Tools: tt, LLM: m}), Request{Goal: "g", Session: "s"}, "session_id"},
		{"blank session", New(Config{}, Deps{Tools: tt, LLM: m}), Request{Goal: "g", Session: " s", UserID: "ana"}, "session_id"},
		{"control character", New(Config{}, Deps{Tools: tt, LLM: m}), Request{Goal: "g", Session: "a\nb", UserID: "ana"}, "session_id"},
		{"too long", New(Config{}, Deps{Tools: tt, LLM: m}), Request{Goal: "g", Session: strings.Repeat("s", MaxSessionID+1), UserID: "ana"}, "session_id"},
		// Every log entry carries the goal: a 900 KB one made each step's entry 900 KB.
		{"goal over the limit", New(Config{}, Deps{Tools: tt, LLM: m}), Request{Goal: strings.Repeat("g", MaxGoal+1), UserID: "ana"}, "goal"},
		{"plan's goal over the limit", New(Config{}, Deps{Tools: tt}), Request{Plan: longGoal(t, plan), UserID: "ana"}, "goal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, err := c.e.Plan(ctx, c.req)
			ce := contracts.AsError(err)
			if run != nil || ce == nil || ce.Code != contracts.CodeInvalidInput || ce.Details["field"] != c.field {
				t.Fatalf("run %v, err %v", run, err)
			}
		})
	}
}

func FuzzCheckSessionID(f *testing.F) {
	for _, s := range []string{"trip", "", " a", "a\tb", "여행", strings.Repeat("x", 129), "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if err := CheckSessionID(id); err == nil {
			if id == "" || len(id) > MaxSessionID || strings.TrimSpace(id) != id {
				t.Fatalf("accepted %q", id)
			}
		} else if contracts.CodeOf(err) != contracts.CodeInvalidInput {
			t.Fatalf("code %v", contracts.CodeOf(err))
		}
	})
}

// A fork takes over its run's context and session (the same user's), so
// the forked turn's composer sees both.
func TestForkKeepsContextAndSession(t *testing.T) {
	ctx := context.Background()
	m, srv := scripted(t, composer("Sunny."), composer("Sunny again."))
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "sunny"})))
	e := New(Config{}, Deps{Tools: tt, LLM: m, Store: newStore()})
	src, err := e.Run(ctx, Request{Plan: mustPlan(t, weatherPlan), Context: "pack an umbrella?", UserID: "ana", Session: "trip"})
	wantStatus(t, src, err, contracts.RunCompleted)
	run, err := e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "a1"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if run.Context != src.Context || run.SessionID != "trip" || len(run.Conversation) != 1 || run.Conversation[0].RunID != src.ID {
		t.Fatalf("fork: context %q, session %q, conversation %+v", run.Context, run.SessionID, run.Conversation)
	}
	if in := modelInput(t, srv, "composer", 1); in["context"] != "pack an umbrella?" || len(turnsIn(in)) != 1 {
		t.Fatalf("the fork's composer saw %v", in)
	}
	other, err := e.Fork(ctx, ForkRequest{RunID: src.ID, FromAction: "a1", UserID: "bo"})
	if err != nil || other.SessionID != "" || other.Context != src.Context {
		t.Fatalf("fork for another user: session %q, context %q, err %v", other.SessionID, other.Context, err)
	}
}

// BenchmarkPlanInSession: what reading a session's last 10 turns adds to
// creating a run (once per run: one List and up to 10 Loads).
func BenchmarkPlanInSession(b *testing.B) {
	for _, session := range []string{"", "long"} {
		b.Run("session="+session, func(b *testing.B) {
			e := New(Config{}, Deps{Tools: newTools(b, weatherTool(returns(map[string]any{"forecast": "sunny"}))), Store: newStore()})
			p := mustPlan(b, weatherPlan)
			for range SessionTurns {
				if _, err := e.Run(context.Background(), Request{Plan: p, UserID: "ana", Session: "long"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.Plan(context.Background(), Request{Plan: p, UserID: "ana", Session: session}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// longGoal is p with a goal one byte over MaxGoal.
func longGoal(t *testing.T, p *contracts.Plan) *contracts.Plan {
	q := *p
	q.Goal = strings.Repeat("g", MaxGoal+1)
	if err := contracts.ValidatePlan(&q); err != nil {
		t.Fatal(err)
	}
	return &q
}
