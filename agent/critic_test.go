package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
)

// Seed 003's critic loop: a low score retries with feedback, and the critic
// always judges the latest attempt.
func TestCriticRetriesWithFeedbackJudgingLatestAttempt(t *testing.T) {
	m, srv := scripted(t,
		planner(haikuPlan),
		llmtest.Reply{Role: "tool", Content: "draft one"},
		llmtest.Reply{Role: "verifier", Content: `{"score":0.2,"status":"fail","feedback":"mention the sea","next":"retry"}`},
		llmtest.Reply{Role: "filler", Content: `{"instruction":"write a haiku that mentions the sea"}`},
		llmtest.Reply{Role: "tool", Content: "draft two, the sea"},
		llmtest.Reply{Role: "verifier", Content: `{"score":0.9,"status":"pass"}`},
		composer("Here is your haiku."))
	tt := newTools(t, builtins(m)...)
	run, err := New(criticOn, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "a haiku"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if stateOf(t, run, "text") != "draft two, the sea" || run.LLMCalls["verifier"] != 2 || run.LLMCalls["tool"] != 2 {
		t.Fatalf("state=%v llm=%v", run.State, run.LLMCalls)
	}
	var judged []string
	for _, r := range srv.Requests() {
		if r.Role == "verifier" {
			judged = append(judged, r.Messages[1].Content)
		}
		if r.Role == "filler" && !strings.Contains(r.Messages[1].Content, "mention the sea") {
			t.Fatalf("feedback not fed into the retry: %s", r.Messages[1].Content)
		}
	}
	if !strings.Contains(judged[1], "draft two") || strings.Contains(judged[1], "draft one") {
		t.Fatalf("critic did not judge the latest attempt: %s", judged[1])
	}
	if c := tt.Calls("llm.generate"); len(c) != 2 || c[0].Key == c[1].Key {
		t.Fatalf("retry must use a new key per attempt: %+v", c)
	}
}
