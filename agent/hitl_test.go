package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/plugins/sdk"
)

var hitlOn = contracts.HITLSwitches{Enabled: true, Clarification: true, PlanApproval: true}

const notesChatPlan = `{"version":"1.0","goal":"notes then chat","timezone":"UTC","actions":[
 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_url"],"inputs":{"title":"Notes"}},
 {"id":"a2","tool":"chat.post_message","intent":"notify","requires":["page_url"],"produces":["message_ts"],"inputs":{"channel":"#general"},"input_bindings":{"text":"page_url"}}]}`

// fresh builds a new engine over the shared store only: nothing else
// carries over from the engine that stopped the run.
func fresh(cfg Config, tt Tools, store memory.Checkpointer, deps ...Deps) *Engine {
	d := Deps{Tools: tt, Store: store}
	if len(deps) > 0 {
		d.LLM = deps[0].LLM
	}
	return New(cfg, d)
}

func TestClarifyResumedByFreshEngine(t *testing.T) {
	m, srv := scripted(t,
		planner(`{"version":"1.0","goal":"?","timezone":"UTC","actions":[],"clarification_questions":["Which city?"]}`),
		planner(weatherPlan), composer("Sunny in Seoul."))
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "sunny"})))
	store := newStore()
	run, err := fresh(Config{HITL: hitlOn}, tt, store, Deps{LLM: m}).Run(context.Background(), Request{Goal: "weather?", Options: contracts.RunOptions{AutoApprove: true}})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Kind != contracts.InterruptClarify || run.Interrupt.Questions[0] != "Which city?" {
		t.Fatalf("interrupt = %+v", run.Interrupt)
	}
	run, err = fresh(Config{HITL: hitlOn}, tt, store, Deps{LLM: m}).Resume(context.Background(), run.ID,
		contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"Which city?": "Seoul"}, By: "u1"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if !strings.Contains(run.Goal, "Which city?: Seoul") || run.Decisions[0].Decision.By != "u1" || run.Decisions[0].At.IsZero() {
		t.Fatalf("goal=%q decisions=%+v", run.Goal, run.Decisions)
	}
	if !strings.Contains(srv.Requests()[1].Messages[1].Content, "Seoul") || run.LLMCalls["planner"] != 2 {
		t.Fatalf("second planning did not see the answer; llm=%v", run.LLMCalls)
	}
}

func TestPlanApprovalApproveEditReject(t *testing.T) {
	ctx := context.Background()
	start := func(t *testing.T) (*testTools, *memory.MemStore, *contracts.Run) {
		tt := newTools(t, notesTool(), chatTool(), searchTool())
		store := newStore()
		run, err := fresh(Config{HITL: hitlOn}, tt, store).Run(ctx, Request{Plan: mustPlan(t, notesChatPlan), UserID: "u1"})
		wantStatus(t, run, err, contracts.RunInterrupted)
		in := run.Interrupt
		if in.Kind != contracts.InterruptPlanApproval || !strings.Contains(in.Mermaid, "a1") || in.Policy["a2"].Decision != contracts.PolicyAllow || len(tt.Calls("")) != 0 {
			t.Fatalf("interrupt = %+v", in)
		}
		return tt, store, run
	}
	t.Run("approve", func(t *testing.T) {
		tt, store, run := start(t)
		run, err := fresh(Config{HITL: hitlOn}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
		wantStatus(t, run, err, contracts.RunCompleted)
		if len(tt.Calls("")) != 2 || run.Decisions[0].Interrupt.Kind != contracts.InterruptPlanApproval {
			t.Fatalf("calls=%d decisions=%+v", len(tt.Calls("")), run.Decisions)
		}
	})
	t.Run("invalid edit refused, run stays interrupted", func(t *testing.T) {
		tt, store, run := start(t)
		bad := mustPlan(t, notesChatPlan)
		bad.Actions[1].Requires = []string{"nobody_makes_this"}
		_, err := fresh(Config{HITL: hitlOn}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionEdit, Plan: bad, By: "u1"})
		if contracts.CodeOf(err) != contracts.CodeUnsatisfiedRequires {
			t.Fatalf("err = %v", err)
		}
		again, _ := store.Load(ctx, run.ID)
		if again.Status != contracts.RunInterrupted || again.Seq != run.Seq || len(again.Plans) != 1 || len(again.Decisions) != 0 {
			t.Fatalf("refused edit changed the run: %+v", again)
		}
		good := mustPlan(t, `{"version":"1.0","goal":"search only","timezone":"UTC","actions":[
		 {"id":"s1","tool":"web.search","intent":"search","requires":[],"produces":["results"],"inputs":{"query":"q"}}]}`)
		run, err = fresh(Config{HITL: hitlOn}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionEdit, Plan: good, By: "u1"})
		wantStatus(t, run, err, contracts.RunCompleted)
		if len(run.Plans) != 2 || run.Plans[1].Source != "edit" || len(tt.Calls("notes.create_page")) != 0 || len(tt.Calls("web.search")) != 1 {
			t.Fatalf("plans=%+v", run.Plans)
		}
	})
	t.Run("reject", func(t *testing.T) {
		tt, store, run := start(t)
		run, err := fresh(Config{HITL: hitlOn}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionReject, By: "u1", Note: "not now"})
		wantStatus(t, run, err, contracts.RunRejected)
		if len(tt.Calls("")) != 0 || run.Result == nil || !strings.Contains(run.Result.Answer, "rejected") {
			t.Fatalf("result = %+v", run.Result)
		}
		_, err = fresh(Config{HITL: hitlOn}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove})
		if contracts.CodeOf(err) != contracts.CodeRunAlreadyFinished {
			t.Fatalf("resume of rejected run: %v", err)
		}
	})
	t.Run("decision that does not fit", func(t *testing.T) {
		tt, store, run := start(t)
		_, err := fresh(Config{HITL: hitlOn}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionSkip})
		if contracts.CodeOf(err) != contracts.CodeInvalidDecision {
			t.Fatalf("err = %v", err)
		}
	})
}

// A destructive tool needs confirmation by policy: step_approval.
func deleteTool() sdk.Tool {
	return tool("notes.delete_page", contracts.RiskDestructive,
		`{"type":"object","required":["page"],"properties":{"page":{"type":"string"}}}`,
		`{"type":"object","required":["deleted"],"properties":{"deleted":{"type":"boolean"}}}`,
		map[string]string{"deleted": "$.deleted"}, returns(map[string]any{"deleted": true}), contracts.TagDelete)
}

const deleteThenChat = `{"version":"1.0","goal":"delete and tell","timezone":"UTC","actions":[
 {"id":"d1","tool":"notes.delete_page","intent":"write","requires":[],"produces":["deleted"],"inputs":{"page":"p1"}},
 {"id":"c1","tool":"chat.post_message","intent":"notify","requires":["deleted"],"produces":[],"inputs":{"channel":"#c","text":"deleted"}}]}`

func TestStepApprovalApproveEditSkip(t *testing.T) {
	ctx := context.Background()
	start := func(t *testing.T) (*testTools, *memory.MemStore, *contracts.Run) {
		tt := newTools(t, deleteTool(), chatTool())
		store := newStore()
		run, err := fresh(Config{}, tt, store).Run(ctx, Request{Plan: mustPlan(t, deleteThenChat)})
		wantStatus(t, run, err, contracts.RunInterrupted)
		if in := run.Interrupt; in.Kind != contracts.InterruptStepApproval || in.ActionID != "d1" || !strings.Contains(string(in.Payload), `"p1"`) || len(tt.Calls("")) != 0 {
			t.Fatalf("interrupt = %+v", in)
		}
		return tt, store, run
	}
	t.Run("approve", func(t *testing.T) {
		tt, store, run := start(t)
		run, err := fresh(Config{}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "admin"})
		wantStatus(t, run, err, contracts.RunCompleted)
		if len(tt.Calls("notes.delete_page")) != 1 {
			t.Fatal("approved step did not run once")
		}
	})
	t.Run("edit payload validated", func(t *testing.T) {
		tt, store, run := start(t)
		_, err := fresh(Config{}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionEdit, Payload: json.RawMessage(`{"page":7}`)})
		if contracts.CodeOf(err) != contracts.CodeSchemaViolation {
			t.Fatalf("bad payload accepted: %v", err)
		}
		run, err = fresh(Config{}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionEdit, Payload: json.RawMessage(`{"page":"p2"}`), By: "admin"})
		wantStatus(t, run, err, contracts.RunCompleted)
		if got := tt.Calls("notes.delete_page")[0].Payload["page"]; got != "p2" {
			t.Fatalf("edited payload not used: %v", got)
		}
	})
	t.Run("skip with a dependent fails closed without a model", func(t *testing.T) {
		tt, store, run := start(t)
		run, err := fresh(Config{OnFailure: contracts.OnFailureFail}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionSkip, By: "admin"})
		wantStatus(t, run, err, contracts.RunFailed)
		if len(tt.Calls("")) != 0 || run.Error.Code != contracts.CodeUnsatisfiedRequires || run.Error.Details["action"] != "c1" {
			t.Fatalf("error=%+v calls=%d", run.Error, len(tt.Calls("")))
		}
		if s := run.Steps[len(run.Steps)-1]; s.Status != contracts.StepSkipped || s.ActionID != "d1" {
			t.Fatalf("skip not recorded: %+v", run.Steps)
		}
	})
	t.Run("skip with a dependent re-plans with a model", func(t *testing.T) {
		tt, store, run := start(t)
		m, _ := scripted(t, replanner(`{"version":"1.0","goal":"tell","timezone":"UTC","actions":[
		 {"id":"c2","tool":"chat.post_message","intent":"notify","requires":[],"produces":[],"inputs":{"channel":"#c","text":"kept the page"}}]}`), composer("Kept the page and told the channel."))
		run, err := fresh(Config{}, tt, store, Deps{LLM: m}).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionSkip, By: "admin"})
		wantStatus(t, run, err, contracts.RunCompleted)
		if len(tt.Calls("notes.delete_page")) != 0 || len(tt.Calls("chat.post_message")) != 1 || run.ReplanCount != 1 {
			t.Fatalf("calls=%v", tt.Calls(""))
		}
	})
}

func TestInputRequiredResumedWithAnswers(t *testing.T) {
	ctx := context.Background()
	tt := newTools(t, chatTool())
	store := newStore()
	plan := mustPlan(t, `{"version":"1.0","goal":"post","timezone":"UTC","actions":[
	 {"id":"a1","tool":"chat.post_message","intent":"notify","requires":[],"produces":["message_ts"],"inputs":{"text":"hello"}}]}`)
	run, err := fresh(Config{}, tt, store).Run(ctx, Request{Plan: plan})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if in := run.Interrupt; in.Kind != contracts.InterruptInputRequired || len(in.Fields) != 1 || in.Fields[0] != "$.channel" {
		t.Fatalf("interrupt = %+v", in)
	}
	if _, err := fresh(Config{}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"other": 1}}); contracts.CodeOf(err) != contracts.CodeInvalidDecision {
		t.Fatalf("incomplete answers accepted: %v", err)
	}
	run, err = fresh(Config{}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"$.channel": "#general"}, By: "u1"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if c := tt.Calls("chat.post_message"); len(c) != 1 || c[0].Payload["channel"] != "#general" || c[0].Payload["text"] != "hello" {
		t.Fatalf("calls = %+v", c)
	}
}

// The filler marks what it cannot know as MISSING (seed 004 §4.3).
func TestFillerMissingBecomesInputRequired(t *testing.T) {
	m, _ := scripted(t, planner(`{"version":"1.0","goal":"post","timezone":"UTC","actions":[
	 {"id":"a1","tool":"chat.post_message","intent":"notify","requires":[],"produces":["message_ts"]}]}`),
		llmtest.Reply{Role: "filler", Content: `{"channel":"MISSING","text":"Meeting at 3"}`}, composer("Posted."))
	tt := newTools(t, chatTool())
	store := newStore()
	run, err := fresh(Config{}, tt, store, Deps{LLM: m}).Run(context.Background(), Request{Goal: "tell the team about the meeting"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Fields[0] != "$.channel" {
		t.Fatalf("interrupt = %+v", run.Interrupt)
	}
	run, err = fresh(Config{}, tt, store, Deps{LLM: m}).Resume(context.Background(), run.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"channel": "#team"}})
	wantStatus(t, run, err, contracts.RunCompleted)
	if c := tt.Calls("")[0].Payload; c["channel"] != "#team" || c["text"] != "Meeting at 3" || run.LLMCalls["filler"] != 1 {
		t.Fatalf("payload=%v llm=%v", c, run.LLMCalls)
	}
}

// A tool result whose text is the filler's word for "unknown" is data:
// bound into the next action it is sent as it is, and nobody is asked.
func TestToolResultMISSINGIsData(t *testing.T) {
	plan := `{"version":"1.0","goal":"forecast to chat","timezone":"UTC","actions":[
	 {"id":"a1","tool":"weather.get","intent":"read","requires":[],"produces":["forecast"],"inputs":{"city":"Seoul"}},
	 {"id":"a2","tool":"chat.post_message","intent":"notify","requires":["forecast"],"produces":[],"inputs":{"channel":"#w"},"input_bindings":{"text":"forecast"}}]}`
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "MISSING"})), chatTool())
	run, err := fresh(Config{}, tt, newStore()).Run(context.Background(), Request{Plan: mustPlan(t, plan)})
	wantStatus(t, run, err, contracts.RunCompleted)
	if c := tt.Calls("chat.post_message"); len(c) != 1 || c[0].Payload["text"] != "MISSING" {
		t.Fatalf("chat calls %+v", c)
	}
}

// A question an older build stored, whose payload holds "MISSING" where a
// value was wanted, is answered as before.
func TestOldMissingQuestionResumes(t *testing.T) {
	ctx := context.Background()
	plan := `{"version":"1.0","goal":"post","timezone":"UTC","actions":[
	 {"id":"a1","tool":"chat.post_message","intent":"notify","requires":[],"produces":[],"inputs":{"text":"hi"}}]}`
	tt := newTools(t, chatTool())
	store := newStore()
	run, err := fresh(Config{}, tt, store).Run(ctx, Request{Plan: mustPlan(t, plan)})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if in := run.Interrupt; in.Kind != contracts.InterruptInputRequired || !slices.Equal(in.Fields, []string{"$.channel"}) || string(in.Payload) != `{"text":"hi"}` {
		t.Fatalf("question %+v payload %s", in, in.Payload)
	}
	old, err := store.Load(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	old.Interrupt.Payload = json.RawMessage(`{"channel":"MISSING","text":"hi"}`)
	old.Seq++
	if err := store.Save(ctx, old); err != nil {
		t.Fatal(err)
	}
	run, err = fresh(Config{}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"$.channel": "#team"}})
	wantStatus(t, run, err, contracts.RunCompleted)
	if c := tt.Calls("")[0].Payload; c["channel"] != "#team" || c["text"] != "hi" {
		t.Fatalf("payload %v", c)
	}
}

// hookStore runs hook once before its first Save, to interleave engines.
type hookStore struct {
	memory.Checkpointer
	once sync.Once
	hook func()
}

func (h *hookStore) Save(ctx context.Context, run *contracts.Run) error {
	h.once.Do(h.hook)
	return h.Checkpointer.Save(ctx, run)
}

func TestSequenceConflictBetweenTwoEngines(t *testing.T) {
	ctx := context.Background()
	tt := newTools(t, notesTool(), chatTool(), searchTool())
	store := newStore()
	run, err := fresh(Config{HITL: hitlOn}, tt, store).Run(ctx, Request{Plan: mustPlan(t, notesChatPlan)})
	wantStatus(t, run, err, contracts.RunInterrupted)
	var winner *contracts.Run
	var winErr error
	slow := &hookStore{Checkpointer: store, hook: func() {
		winner, winErr = fresh(Config{HITL: hitlOn}, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "b"})
	}}
	_, err = fresh(Config{HITL: hitlOn}, tt, slow).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "a"})
	if contracts.CodeOf(err) != contracts.CodeSequenceConflict {
		t.Fatalf("loser err = %v", err)
	}
	wantStatus(t, winner, winErr, contracts.RunCompleted)
	if len(tt.Calls("notes.create_page")) != 1 || len(winner.Decisions) != 1 || winner.Decisions[0].Decision.By != "b" {
		t.Fatalf("side effects=%d decisions=%+v", len(tt.Calls("notes.create_page")), winner.Decisions)
	}
}

// A call in flight when its process stopped is re-issued by a fresh engine
// with the same idempotency key.
func TestInFlightCallReissuedWithSameKey(t *testing.T) {
	ctx := context.Background()
	entered := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	effects := map[string]int{}
	first := true
	h := func(_ context.Context, c sdk.Call) (any, error) {
		mu.Lock()
		effects[c.IdempotencyKey]++
		wasFirst := first
		first = false
		mu.Unlock()
		if wasFirst {
			close(entered)
			<-release // the "crashed" process never returns in time
		}
		return map[string]any{"id": "p", "url": "u"}, nil
	}
	notes := notesTool()
	notes.Handler = h
	tt := newTools(t, notes)
	store := newStore()
	plan := mustPlan(t, `{"version":"1.0","goal":"page","timezone":"UTC","actions":[
	 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_url"],"inputs":{"title":"t"}}]}`)
	crashed := make(chan error, 1)
	go func() {
		// Without leases: it stands for a process that stopped renewing.
		_, err := fresh(Config{}, tt, struct{ memory.Checkpointer }{store}).Run(ctx, Request{Plan: plan})
		crashed <- err
	}()
	<-entered
	runs, err := store.List(ctx, memory.Filter{})
	if err != nil || len(runs) != 1 || runs[0].Status != contracts.RunRunning {
		t.Fatalf("runs=%+v err=%v", runs, err)
	}
	run, err := fresh(Config{}, tt, store).Resume(ctx, runs[0].ID, contracts.Decision{})
	wantStatus(t, run, err, contracts.RunCompleted)
	close(release)
	if err := <-crashed; contracts.CodeOf(err) != contracts.CodeSequenceConflict {
		t.Fatalf("the stale engine was not stopped: %v", err)
	}
	calls := tt.Calls("")
	if len(calls) != 2 || calls[0].Key != calls[1].Key || len(effects) != 1 {
		t.Fatalf("calls=%+v", calls)
	}
}
