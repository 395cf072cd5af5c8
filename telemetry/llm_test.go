package telemetry_test

import (
	"context"
	"testing"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/agent/llm/openai"
	"github.com/ordo-run/ordo/telemetry"
)

// TestLLMTokensBounded: the endpoint reports its own usage, and the metric
// counts it as the run record does (llm.Usage.Bounded). A negative count
// made the counter panic, taking the server down with it; a huge one put
// in ordo_llm_tokens_total tokens that no run's usage shows.
func TestLLMTokensBounded(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply{Content: "{}", Usage: &llmtest.Usage{Prompt: -7, Completion: 4}},
		llmtest.Reply{Content: "{}", Usage: &llmtest.Usage{Prompt: 3, Completion: llm.MaxCallTokens * 8}},
	)
	client, err := openai.New(openai.Config{Model: "m", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	m := telemetry.New()
	model := m.LLM(client, "m")
	for range 2 {
		if _, err := model.Complete(context.Background(), llm.Request{SchemaName: "planner",
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	got := counters(t, m, "ordo_llm_tokens_total", "type")
	for typ, want := range map[string]float64{"input": 0 + 3, "output": 4 + llm.MaxCallTokens} {
		if got[typ] != want {
			t.Errorf("%s tokens: %v, want %v", typ, got[typ], want)
		}
	}
}

// counters are the values of counter name in m, by the value of its label.
func counters(t *testing.T, m *telemetry.Metrics, name, label string) map[string]float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == label {
					got[l.GetValue()] += s.GetCounter().GetValue()
				}
			}
		}
	}
	return got
}
