package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
)

const haikuPlan = `{"version":"1.0","goal":"write","timezone":"UTC","actions":[
 {"id":"g1","tool":"llm.generate","intent":"transform","requires":[],"produces":["text"],"inputs":{"instruction":"write a haiku"}}]}`

var criticOn = Config{Verifier: VerifierConfig{Mode: VerifyLLM, Threshold: 0.8, MaxIterations: 3}}

// The critic's ask_user stops at a verify_question interrupt (not a
// re-plan); the person's answer reaches the retry's filler, and a fresh
// engine continues the run from the store.
func TestCriticAskUserBecomesVerifyQuestion(t *testing.T) {
	m, srv := scripted(t, planner(haikuPlan),
		llmtest.Reply{Role: "tool", Content: "draft one"},
		llmtest.Reply{Role: "verifier", Content: `{"score":0.3,"status":"fail","feedback":"theme unclear","next":"ask_user","question":"Which season should it be about?"}`},
		llmtest.Reply{Role: "filler", Content: `{"instruction":"write a winter haiku"}`},
		llmtest.Reply{Role: "tool", Content: "snow on the pine"},
		llmtest.Reply{Role: "verifier", Content: `{"score":0.9,"status":"pass"}`},
		composer("Here is your winter haiku."))
	tt := newTools(t, builtins(m)...)
	store := newStore()
	run, err := fresh(criticOn, tt, store, Deps{LLM: m}).Run(context.Background(), Request{Goal: "a haiku"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	in := run.Interrupt
	if in.Kind != contracts.InterruptVerifyQuestion || in.ActionID != "g1" || in.Attempt != 1 || in.Questions[0] != "Which season should it be about?" ||
		run.ReplanCount != 0 || run.LLMCalls["replanner"] != 0 {
		t.Fatalf("interrupt = %+v replans=%d", in, run.ReplanCount)
	}
	if !strings.Contains(string(in.Payload), "draft one") {
		t.Fatalf("the person is not shown the judged result: %s", in.Payload)
	}
	_, err = fresh(criticOn, tt, store, Deps{LLM: m}).Resume(context.Background(), run.ID, contracts.Decision{Kind: contracts.DecisionSkip})
	if contracts.CodeOf(err) != contracts.CodeInvalidDecision {
		t.Fatalf("skip accepted on a verify_question: %v", err)
	}
	run, err = fresh(criticOn, tt, store, Deps{LLM: m}).Resume(context.Background(), run.ID,
		contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"season": "winter"}, By: "u1"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if stateOf(t, run, "text") != "snow on the pine" || run.ReplanCount != 0 {
		t.Fatalf("state=%v replans=%d", run.State, run.ReplanCount)
	}
	var filler string
	for _, r := range srv.Requests() {
		if r.Role == "filler" {
			filler = r.Messages[1].Content
		}
	}
	if !strings.Contains(filler, "winter") || !strings.Contains(filler, "Which season") || !strings.Contains(filler, "theme unclear") {
		t.Fatalf("the retry did not hear the question and answer: %s", filler)
	}
}

// Approve keeps the judged attempt's result: no second call.
func TestVerifyQuestionApproveKeepsResult(t *testing.T) {
	m, _ := scripted(t, planner(haikuPlan),
		llmtest.Reply{Role: "tool", Content: "draft one"},
		llmtest.Reply{Role: "verifier", Content: `{"score":0.5,"status":"fail","reason":"is a pun fine?","next":"ask_user"}`},
		composer("Here it is."))
	tt := newTools(t, builtins(m)...)
	e := New(criticOn, Deps{Tools: tt, LLM: m})
	run, err := e.Run(context.Background(), Request{Goal: "a haiku"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Questions[0] != "is a pun fine?" {
		t.Fatalf("question = %+v", run.Interrupt)
	}
	run, err = e.Resume(context.Background(), run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if stateOf(t, run, "text") != "draft one" || len(tt.Calls("llm.generate")) != 1 || run.LLMCalls["verifier"] != 1 {
		t.Fatalf("state=%v calls=%d llm=%v", run.State, len(tt.Calls("llm.generate")), run.LLMCalls)
	}
}

// The critic's patch.suggested_payload_overrides reach the retry's
// payload; overrides the input schema refuses are dropped.
func TestCriticPayloadOverridesApplied(t *testing.T) {
	m, _ := scripted(t, planner(haikuPlan),
		llmtest.Reply{Role: "tool", Content: "draft one"},
		llmtest.Reply{Role: "verifier", Content: `{"score":0.2,"status":"fail","next":"retry","patch":{"suggested_payload_overrides":{"instruction":"write a haiku about rain"}}}`},
		llmtest.Reply{Role: "tool", Content: "rain"},
		llmtest.Reply{Role: "verifier", Content: `{"score":0.2,"status":"fail","next":"retry","patch":{"suggested_payload_overrides":{"tone":"dry"}}}`},
		llmtest.Reply{Role: "tool", Content: "rain again"},
		llmtest.Reply{Role: "verifier", Content: `{"score":0.95,"status":"pass"}`},
		composer("Done."))
	tt := newTools(t, builtins(m)...)
	run, err := New(criticOn, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "a haiku"})
	wantStatus(t, run, err, contracts.RunCompleted)
	calls := tt.Calls("llm.generate")
	if len(calls) != 3 || calls[1].Payload["instruction"] != "write a haiku about rain" {
		t.Fatalf("overrides not applied: %+v", calls)
	}
	if _, bad := calls[2].Payload["tone"]; bad || calls[2].Payload["instruction"] != "write a haiku" {
		t.Fatalf("overrides outside the schema not dropped: %+v", calls[2].Payload)
	}
}

// proceed_anyway plans a clarify interrupt's goal without answers.
func TestClarifyProceedAnyway(t *testing.T) {
	m, srv := scripted(t,
		planner(`{"version":"1.0","goal":"?","timezone":"UTC","actions":[],"clarification_questions":["Which city?"]}`),
		planner(weatherPlan), composer("Sunny in Seoul."))
	tt := newTools(t, weatherTool(returns(map[string]any{"forecast": "sunny"})))
	e := New(Config{HITL: hitlOn}, Deps{Tools: tt, LLM: m})
	run, err := e.Run(context.Background(), Request{Goal: "weather?", Options: contracts.RunOptions{AutoApprove: true}})
	wantStatus(t, run, err, contracts.RunInterrupted)
	run, err = e.Resume(context.Background(), run.ID, contracts.Decision{Kind: contracts.DecisionProceedAnyway, By: "u1"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if !strings.Contains(srv.Requests()[1].Messages[1].Content, "proceed without answering") {
		t.Fatalf("second planning not told to proceed: %s", srv.Requests()[1].Messages[1].Content)
	}
}

// On the last attempt the critic's ask_user still goes to the person, not
// to the re-planner; the answer buys one more attempt.
func TestCriticAskUserOnLastAttemptAsksThePerson(t *testing.T) {
	m, _ := scripted(t, planner(haikuPlan),
		llmtest.Reply{Role: "tool", Content: "draft one"},
		llmtest.Reply{Role: "verifier", Content: `{"score":0.3,"status":"fail","next":"ask_user","question":"Which season?"}`},
		llmtest.Reply{Role: "filler", Content: `{"instruction":"write a winter haiku"}`},
		llmtest.Reply{Role: "tool", Content: "snow on the pine"},
		llmtest.Reply{Role: "verifier", Content: `{"score":0.9,"status":"pass"}`},
		composer("Here is your winter haiku."))
	tt := newTools(t, builtins(m)...)
	once := Config{Verifier: VerifierConfig{Mode: VerifyLLM, Threshold: 0.8, MaxIterations: 1}}
	e := New(once, Deps{Tools: tt, LLM: m})
	run, err := e.Run(context.Background(), Request{Goal: "a haiku"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Kind != contracts.InterruptVerifyQuestion || run.LLMCalls["replanner"] != 0 {
		t.Fatalf("interrupt = %+v llm=%v", run.Interrupt, run.LLMCalls)
	}
	run, err = e.Resume(context.Background(), run.ID, contracts.Decision{Kind: contracts.DecisionAnswer, Answers: map[string]any{"season": "winter"}, By: "u1"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if stateOf(t, run, "text") != "snow on the pine" || run.ReplanCount != 0 {
		t.Fatalf("state=%v replans=%d", run.State, run.ReplanCount)
	}
}
