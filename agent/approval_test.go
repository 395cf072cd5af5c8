package agent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/agent/policy"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// A step approval holds for the payload the person was shown: the call
// sends exactly that payload (the filler model is not asked again, and
// would write something else), and a retry whose payload the filler
// rewrote is asked about again before it runs.
func TestStepApprovalHoldsForThePayloadShown(t *testing.T) {
	ctx := context.Background()
	m, srv := scripted(t,
		llmtest.Reply{Role: "filler", Content: `{"channel":"#general","text":"hello team"}`},
		llmtest.Reply{Role: "filler", Content: `{"channel":"#general","text":"wire 10k to account 666"}`})
	tt := newTools(t, chatTool())
	store := newStore()
	cfg := Config{Policy: policy.Config{ConfirmTools: []string{"chat."}}, OnFailure: contracts.OnFailureFail}
	plan := mustPlan(t, `{"version":"1.0","goal":"greet the team","timezone":"UTC","actions":[
	 {"id":"a1","tool":"chat.post_message","intent":"notify","requires":[],"produces":["message_ts"],"inputs":{"channel":"#general"},
	  "success_criteria":["message_ts == never"],"retries":{"max_attempts":2}}]}`)
	run, err := fresh(cfg, tt, store, Deps{LLM: m}).Run(ctx, Request{Plan: plan, UserID: "u1"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if in := run.Interrupt; in.Kind != contracts.InterruptStepApproval || string(in.Payload) != `{"channel":"#general","text":"hello team"}` {
		t.Fatalf("interrupt = %+v payload %s", in, in.Payload)
	}
	run, err = fresh(cfg, tt, store, Deps{LLM: m}).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
	if calls := tt.Calls("chat.post_message"); len(calls) == 0 || calls[0].Payload["text"] != "hello team" {
		t.Fatalf("the approved call sent %+v, want the payload shown", calls)
	}
	wantStatus(t, run, err, contracts.RunInterrupted)
	// The criterion failed the first attempt; the filler rewrote the retry.
	in := run.Interrupt
	if in.Kind != contracts.InterruptStepApproval || in.Attempt != 2 || string(in.Payload) != `{"channel":"#general","text":"wire 10k to account 666"}` {
		t.Fatalf("the rewritten retry was not asked about: interrupt %+v, calls %+v", in, tt.Calls(""))
	}
	run, err = fresh(cfg, tt, store, Deps{LLM: m}).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionReject, By: "u1"})
	wantStatus(t, run, err, contracts.RunRejected)
	if n := len(tt.Calls("")); n != 1 || srv.Count("filler") != 2 {
		t.Fatalf("calls %d, filler calls %d", n, srv.Count("filler"))
	}
}

// No model needed: a binding whose key a parallel step set after the
// payload was shown changed what an approval sent ("hello team" approved,
// the draft's text posted).
func TestStepApprovalSendsThePayloadShownWhateverTheStateBecame(t *testing.T) {
	ctx := context.Background()
	draft := tool("text.template", contracts.RiskRead, `{"type":"object"}`,
		`{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}`, map[string]string{"text": "$.text"},
		returns(map[string]any{"text": "wire 10k to account 666"}))
	tt := newTools(t, draft, chatTool())
	store := newStore()
	cfg := Config{Policy: policy.Config{ConfirmTools: []string{"chat."}}}
	run, err := fresh(cfg, tt, store).Run(ctx, Request{Plan: mustPlan(t, `{"version":"1.0","goal":"greet","timezone":"UTC","actions":[
	 {"id":"draft","tool":"text.template","intent":"transform","requires":[],"produces":["text"],"inputs":{}},
	 {"id":"post","tool":"chat.post_message","intent":"notify","requires":[],"produces":[],"inputs":{"channel":"#general","text":"hello team"},"input_bindings":{"text":"text"}}]}`)})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if in := run.Interrupt; in.ActionID != "post" || string(in.Payload) != `{"channel":"#general","text":"hello team"}` || stateOf(t, run, "text") == nil {
		t.Fatalf("interrupt %+v payload %s state %v", in, in.Payload, run.State)
	}
	run, err = fresh(cfg, tt, store).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if c := tt.Calls("chat.post_message"); len(c) != 1 || c[0].Payload["text"] != "hello team" {
		t.Fatalf("posted %+v, want the payload shown", c)
	}
}

// Policy holds for what runs, not only for what was planned: a stored plan
// that goes on executing (approved, resumed, taken over) is checked again
// against the configuration and the contracts as they are then. A tool
// denied since fails the run before any call; one that now asks for
// confirmation (here its contract became destructive, which is asked
// about first as a changed contract) stops at a step approval.
func TestPolicyRecheckedWhenAStoredPlanExecutes(t *testing.T) {
	ctx := context.Background()
	start := func(t *testing.T) (*testTools, *memory.MemStore, *contracts.Run) {
		tt := newTools(t, notesTool(), chatTool())
		store := newStore()
		run, err := fresh(Config{HITL: hitlOn}, tt, store).Run(ctx, Request{Plan: mustPlan(t, notesChatPlan), UserID: "u1"})
		wantStatus(t, run, err, contracts.RunInterrupted)
		if run.Interrupt.Kind != contracts.InterruptPlanApproval || run.Policy["a2"].Decision != contracts.PolicyAllow {
			t.Fatalf("interrupt %+v policy %+v", run.Interrupt, run.Policy)
		}
		return tt, store, run
	}
	approve := contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"}
	t.Run("denied since", func(t *testing.T) {
		tt, store, run := start(t)
		cfg := Config{HITL: hitlOn, Policy: policy.Config{DenyTools: []string{"chat."}}}
		run, err := fresh(cfg, tt, store).Resume(ctx, run.ID, approve)
		wantStatus(t, run, err, contracts.RunFailed)
		if run.Error.Code != contracts.CodePolicyDenied || run.Error.Details["action"] != "a2" || len(tt.Calls("")) != 0 {
			t.Fatalf("error %+v, calls %v", run.Error, tt.Calls(""))
		}
	})
	t.Run("scope revoked since", func(t *testing.T) {
		tt := newTools(t, notesTool(), chatTool())
		tt.cat["chat.post_message"].Contract.ScopesRequired = []string{"chat:write"}
		store := newStore()
		grants := map[string][]string{"u1": {"chat:write"}}
		cfg := Config{HITL: hitlOn}
		engine := func() *Engine {
			return New(cfg, Deps{Tools: tt, Store: store, Scopes: func(user string) []string { return grants[user] }})
		}
		run, err := engine().Run(ctx, Request{Plan: mustPlan(t, notesChatPlan), UserID: "u1", Options: contracts.RunOptions{Scopes: grants["u1"]}})
		wantStatus(t, run, err, contracts.RunInterrupted)
		grants["u1"] = nil // the operator took chat:write away while the run waited
		run, err = engine().Resume(ctx, run.ID, approve)
		wantStatus(t, run, err, contracts.RunFailed)
		if run.Error.Code != contracts.CodePolicyDenied || !strings.Contains(run.Error.Message, "missing scope chat:write") || len(tt.Calls("")) != 0 {
			t.Fatalf("error %+v, calls %v", run.Error, tt.Calls(""))
		}
	})
	t.Run("destructive since", func(t *testing.T) {
		tt, store, run := start(t)
		chat := chatTool()
		chat.Contract.RiskLevel = contracts.RiskDestructive
		changed := newTools(t, notesTool(), chat)
		run, err := fresh(Config{HITL: hitlOn}, changed, store).Resume(ctx, run.ID, approve)
		wantStatus(t, run, err, contracts.RunInterrupted)
		// The approved plan's tool changed its contract: asked first (pin.go).
		if in := run.Interrupt; in.Kind != contracts.InterruptContractChanged || !slices.Equal(in.Changes[0].Fields, []string{contracts.PartRisk}) {
			t.Fatalf("interrupt %+v", in)
		}
		run, err = fresh(Config{HITL: hitlOn}, changed, store).Resume(ctx, run.ID, approve)
		wantStatus(t, run, err, contracts.RunInterrupted)
		if in := run.Interrupt; in.Kind != contracts.InterruptStepApproval || in.ActionID != "a2" || len(changed.Calls("chat.post_message")) != 0 {
			t.Fatalf("interrupt %+v, calls %v", in, changed.Calls(""))
		}
		run, err = fresh(Config{HITL: hitlOn}, changed, store).Resume(ctx, run.ID, approve)
		wantStatus(t, run, err, contracts.RunCompleted)
		if len(changed.Calls("chat.post_message")) != 1 || len(tt.Calls("")) != 0 {
			t.Fatalf("calls %v", changed.Calls(""))
		}
	})
}

// With plan approval on, the re-planner's plan waits for the person like
// the first one did: approving a plan that read a sheet never let the
// plan written after its failure create a page unseen.
func TestReplannedPlanAwaitsPlanApproval(t *testing.T) {
	ctx := context.Background()
	m, srv := scripted(t, replanner(`{"version":"1.0","goal":"g","timezone":"UTC","actions":[
	 {"id":"p1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_url"],"inputs":{"title":"Written by the re-planner"}}]}`),
		composer("Wrote the page."))
	broken := tool("sheets.get_range", contracts.RiskRead, `{"type":"object","required":["range"],"properties":{"range":{"type":"string"}}}`,
		`{"type":"object"}`, nil, func(context.Context, sdk.Call) (any, error) {
			return nil, contracts.Errorf(contracts.CodeToolFailed, "no such sheet")
		})
	tt := newTools(t, broken, notesTool())
	store := newStore()
	cfg := Config{HITL: hitlOn, ReplanBudget: 1}
	run, err := fresh(cfg, tt, store, Deps{LLM: m}).Run(ctx, Request{Plan: mustPlan(t, `{"version":"1.0","goal":"read the sheet","timezone":"UTC","actions":[
	 {"id":"r1","tool":"sheets.get_range","intent":"read","requires":[],"produces":[],"inputs":{"range":"A1:B2"}}]}`)})
	wantStatus(t, run, err, contracts.RunInterrupted)
	approve := contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"}
	run, err = fresh(cfg, tt, store, Deps{LLM: m}).Resume(ctx, run.ID, approve)
	if n := len(tt.Calls("notes.create_page")); n != 0 {
		t.Fatalf("the re-planned plan ran unapproved: %d page(s) created", n)
	}
	wantStatus(t, run, err, contracts.RunInterrupted)
	if in := run.Interrupt; in.Kind != contracts.InterruptPlanApproval || in.PlanVersion != 2 || srv.Count("replanner") != 1 {
		t.Fatalf("interrupt %+v", in)
	}
	run, err = fresh(cfg, tt, store, Deps{LLM: m}).Resume(ctx, run.ID, approve)
	wantStatus(t, run, err, contracts.RunCompleted)
	if len(tt.Calls("notes.create_page")) != 1 {
		t.Fatalf("calls %v", tt.Calls(""))
	}
}
