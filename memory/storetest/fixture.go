package storetest

import (
	_ "embed"
	"encoding/json"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// RunV0 is a checkpoint in format version 0, the pre-release shape ("run_id",
// "history", one unversioned "plan"), as an older build wrote it.
//
//go:embed testdata/run_v0.json
var RunV0 []byte

// Base is the fixed clock fixtures start from. It has microsecond precision
// because Postgres timestamps do.
var Base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// FullRun returns a run with every field set, at checkpoint seq, so a round
// trip through a store shows that nothing is lost.
func FullRun(id string, seq int64) *contracts.Run {
	yes := true
	plan := contracts.Plan{
		Version: contracts.PlanVersion, Goal: "book a table and tell Ana", Timezone: "Asia/Seoul", Locale: "ko-KR",
		Context: &contracts.PlanContext{UserText: "저녁 예약", ConnectedServices: []string{"calendar"}, ToolCandidates: []string{"cal.book"}},
		Actions: []contracts.Action{{
			ID: "a1", Tool: "cal.book", Intent: "book", Summary: "book 19:00", Requires: []string{}, Produces: []string{"booking"},
			SuccessCriteria: []string{"booking.id exists"}, Risk: &contracts.ActionRisk{Level: contracts.RiskWrite, Tags: []string{"external_send"}},
			PolicyHints: &contracts.PolicyHints{NeedsUserConfirmation: true}, DependsOn: []string{},
			InputBindings: map[string]string{"when": "time"}, Inputs: map[string]any{"people": float64(2)},
			Retries: &contracts.Retries{MaxAttempts: 3, BackoffMS: 100}, TimeoutMS: 5000,
		}},
		FinalResponse: &contracts.FinalResponse{Style: "short", IncludeLinks: &yes},
		Constraints:   &contracts.Constraints{MaxActions: 5, AllowParallel: &yes, AllowedServices: []string{"cal"}},
	}
	pin := contracts.ContractPin{Hash: "2c26b4", Parts: map[string]string{contracts.PartDescription: "a1", contracts.PartInputSchema: "c3"}}
	return &contracts.Run{
		FormatVersion: contracts.RunFormatVersion,
		ID:            id, UserID: "ana", Goal: "book a table and tell Ana", Status: contracts.RunInterrupted,
		CreatedAt: Base, UpdatedAt: Base.Add(time.Duration(seq) * time.Second), Seq: seq,
		Options: contracts.RunOptions{AutoApprove: true, HITL: &contracts.HITLSwitches{Enabled: true, StepApproval: true},
			Scopes: []string{"cal:write"}, Timezone: "Asia/Seoul", Locale: "ko-KR", Services: []string{"cal"}},
		SessionID: "dinner", Context: "Ana is vegetarian",
		Conversation: []contracts.Turn{{RunID: "run_before", Goal: "find a restaurant", Answer: "Mori, 19:00 free",
			Status: contracts.RunCompleted, At: Base.Add(-time.Hour)}},
		Plans: []contracts.PlanRevision{{Version: 1, Source: "planner", Plan: plan, Levels: [][]string{{"a1"}},
			Mermaid: "graph TD\n a1", Reason: "first", CreatedAt: Base, Pins: map[string]contracts.ContractPin{"cal.book": pin}}},
		Policy: map[string]contracts.PolicyDecision{"a1": {Decision: contracts.PolicyRequireConfirm, Reason: "external_send"}},
		State:  map[string]json.RawMessage{"time": json.RawMessage(`"19:00"`), "nested": json.RawMessage(`{"a":[1,2.5,"x"],"b":null}`)},
		Steps: []contracts.StepRecord{{ActionID: "a1", Tool: "cal.book", PlanVersion: 1, Attempt: 1, IdempotencyKey: id + "/a1/1",
			Payload: json.RawMessage(`{"when":"19:00"}`), Result: json.RawMessage(`{"id":"b-1"}`), Produced: []string{"booking"},
			Status: contracts.StepFailed, Error: &contracts.Error{Code: contracts.CodeToolTimeout, Message: "slow", Retryable: true, Details: map[string]any{"ms": float64(5000)}},
			StartedAt: Base.Add(time.Millisecond), EndedAt: Base.Add(2 * time.Millisecond)}},
		Interrupt: &contracts.Interrupt{Kind: contracts.InterruptStepApproval, Message: "book?", Questions: []string{"which day?"},
			Suggestions: map[string]string{"day": "friday"}, PlanVersion: 1, Mermaid: "graph TD", Policy: map[string]contracts.PolicyDecision{"a1": {Decision: contracts.PolicyAllow}},
			ActionID: "a1", Tool: "cal.book", Payload: json.RawMessage(`{"when":"19:00"}`), Fields: []string{"when"}, CreatedAt: Base,
			Changes: []contracts.ContractChange{{Tool: "cal.book", Actions: []string{"a1"}, Fields: []string{contracts.PartDescription},
				Old: pin, New: contracts.ContractPin{Hash: "9f86d0", Parts: map[string]string{contracts.PartDescription: "b2"}}, Description: "Books, and tells."}}},
		Decisions: []contracts.DecisionRecord{{Interrupt: contracts.Interrupt{Kind: contracts.InterruptPlanApproval, Message: "ok?", CreatedAt: Base},
			Decision: contracts.Decision{Kind: contracts.DecisionEdit, Plan: &plan, Payload: json.RawMessage(`{"x":1}`),
				Answers: map[string]any{"day": "friday"}, By: "ana", Note: "edited"}, At: Base.Add(time.Second)}},
		ReplanCount: 1,
		LLMCalls:    map[string]int{"planner": 1, "replanner": 1},
		Result:      &contracts.RunResult{Answer: "booked", Composer: "template"},
		Error:       &contracts.Error{Code: contracts.CodeReplanExhausted, Message: "none"},
		Usage: contracts.RunUsage{ByRole: map[string]contracts.TokenUsage{
			"planner":   {InputTokens: 900, OutputTokens: 120, CachedTokens: 512, CostUSD: 0.0021, Models: []string{"m"}},
			"replanner": {InputTokens: 1500, OutputTokens: 300, CostUSD: 0.0042, Models: []string{"m"}},
		}, Total: contracts.TokenUsage{InputTokens: 2400, OutputTokens: 420, CachedTokens: 512, CostUSD: 0.0063, Models: []string{"m"}}},
	}
}

// SimpleRun is a small run for tests that need many.
func SimpleRun(id, user string, status contracts.RunStatus, seq int64, updated time.Time) *contracts.Run {
	return &contracts.Run{FormatVersion: contracts.RunFormatVersion, ID: id, UserID: user, Goal: "goal of " + id, Status: status, Seq: seq,
		CreatedAt: updated.Add(-time.Minute), UpdatedAt: updated}
}
