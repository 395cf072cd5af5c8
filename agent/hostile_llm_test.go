package agent

import (
	"context"
	"math"
	"testing"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
)

// TestHostileTokenCountsCannotBypassBudgets: an endpoint reports the
// tokens it likes. A count of 2^63-1 (whose sum with the output tokens
// wraps int64 negative) or a negative one must not make a run's usage,
// cost or budgets go negative: the tokens budget still stops the run
// before its first step, and no figure recorded is below zero.
func TestHostileTokenCountsCannotBypassBudgets(t *testing.T) {
	for _, u := range []*llmtest.Usage{used(math.MaxInt64, 5, 0), used(-1_000_000, -5, 0), used(10, 5, 1_000_000)} {
		m, srv := scripted(t, llmtest.Reply{Role: "planner", Usage: u, Content: twoStepPlan}, composer("done"))
		tt := newTools(t, searchTool(), notesTool())
		cfg := Config{
			Budgets: contracts.Budgets{Run: contracts.Budget{Tokens: 1000}},
			Prices:  map[string]llm.Price{"test": {Input: 1, Output: 1, Cached: new(0.1)}},
		}
		run, err := New(cfg, Deps{Tools: tt, LLM: m}).Run(context.Background(), Request{Goal: "search and note"})
		if err != nil {
			t.Fatal(err)
		}
		total := run.Usage.Total
		if total.InputTokens < 0 || total.OutputTokens < 0 || total.CachedTokens < 0 || total.CachedTokens > total.InputTokens || total.CostUSD < 0 {
			t.Errorf("usage %+v reported: recorded %+v", *u, total)
		}
		if u.Prompt == math.MaxInt64 && (run.Status != contracts.RunFailed || contracts.CodeOf(run.Error) != contracts.CodeBudgetExceeded || len(tt.Calls("")) != 0) {
			t.Errorf("usage %+v reported: status %s (%v), tool calls %v, composer %d: the tokens budget was bypassed",
				*u, run.Status, run.Error, tt.Calls(""), srv.Count("composer"))
		}
	}
}
