package contracts

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// RunFormatVersion is the checkpoint format this build writes. Stores keep
// it beside every checkpoint; readers upgrade older versions on load.
const RunFormatVersion = 1

// RunStatus is where a run stands.
type RunStatus string

// Run statuses. Completed, failed, rejected and cancelled are final.
const (
	RunPending     RunStatus = "pending"     // created, not yet planned
	RunReady       RunStatus = "ready"       // planned and approved, not yet executing
	RunRunning     RunStatus = "running"     // a server is executing it
	RunInterrupted RunStatus = "interrupted" // waiting for a person (see Interrupt)
	RunCompleted   RunStatus = "completed"
	RunFailed      RunStatus = "failed"
	RunRejected    RunStatus = "rejected"
	RunCancelled   RunStatus = "cancelled"
)

// Final reports whether no more work will happen on a run in this status.
func (s RunStatus) Final() bool {
	switch s {
	case RunCompleted, RunFailed, RunRejected, RunCancelled:
		return true
	}
	return false
}

// Run is the whole record of one goal's journey, and the value a checkpoint
// stores. Steps and Decisions are append-only: retries, re-plans and
// resumes add records and never rewrite one.
type Run struct {
	FormatVersion int       `json:"format_version"`
	ID            string    `json:"id"`
	UserID        string    `json:"user_id,omitempty"`
	Goal          string    `json:"goal"`
	Status        RunStatus `json:"status"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
	// Seq is the sequence number of the checkpoint that holds this value.
	// A store accepts a write only if Seq is one more than the stored one.
	Seq     int64      `json:"seq"`
	Options RunOptions `json:"options"`
	// SessionID makes the run a turn of its user's conversation of that
	// name; Conversation holds the turns before it, as the planner,
	// re-planner and composer were given them (see agent/session.go).
	SessionID    string `json:"session_id,omitempty"`
	Conversation []Turn `json:"conversation,omitempty"`
	// Context is the caller's extra facts, kept so that every model call
	// of the run (a re-plan after clarification too) sees them.
	Context string `json:"context,omitempty"`

	Plans     []PlanRevision             `json:"plans,omitempty"`  // versions; the last is current
	Policy    map[string]PolicyDecision  `json:"policy,omitempty"` // by action id of the current plan
	State     map[string]json.RawMessage `json:"state,omitempty"`
	Steps     []StepRecord               `json:"steps,omitempty"`
	Interrupt *Interrupt                 `json:"interrupt,omitempty"`
	Decisions []DecisionRecord           `json:"decisions,omitempty"`

	ReplanCount int            `json:"replan_count"`
	LLMCalls    map[string]int `json:"llm_calls,omitempty"` // by role: planner, replanner, filler, verifier, composer, tool
	Usage       RunUsage       `json:"usage,omitzero"`      // the tokens and cost of those calls
	Result      *RunResult     `json:"result,omitempty"`
	Error       *Error         `json:"error,omitempty"`

	logMark runLogMark // what the run's log already holds (see Delta)
}

// RunOptions are per-run switches that override configuration.
type RunOptions struct {
	// AutoApprove answers the approvals configuration asks for (plan and
	// step approval) without asking. A policy require_confirm still asks,
	// and policy denials still stop the run.
	AutoApprove bool `json:"auto_approve,omitempty"`
	// AutoApprovePolicy also answers policy require_confirm without asking.
	// Only a person starting the run themselves sets it (`ordo run --yes`);
	// MCP callers cannot, so an assistant's auto_approve never stands in
	// for the person policy wants to ask.
	AutoApprovePolicy bool `json:"auto_approve_policy,omitempty"`
	// HITL overrides the configured human-in-the-loop switches; nil keeps them.
	HITL *HITLSwitches `json:"hitl,omitempty"`
	// Scopes are the caller's granted scopes, checked against contracts.
	Scopes   []string `json:"scopes,omitempty"`
	Timezone string   `json:"timezone,omitempty"`
	Locale   string   `json:"locale,omitempty"`
	// Services restricts planning to these services or tool prefixes.
	Services []string `json:"services,omitempty"`
	// Direct marks a direct tool call (the MCP gateway): a one-action run
	// that is never re-planned and whose answer is the tool's result.
	Direct bool `json:"direct,omitempty"`
}

// HITLSwitches turn the human-in-the-loop points on and off.
// Enabled is the global switch: off means no point interrupts, except a
// policy require_confirm, which always asks unless the run auto-approves.
type HITLSwitches struct {
	Enabled       bool `json:"enabled" yaml:"enabled"`
	Clarification bool `json:"clarification" yaml:"clarification"`
	PlanApproval  bool `json:"plan_approval" yaml:"plan_approval"`
	StepApproval  bool `json:"step_approval" yaml:"step_approval"`
}

// PlanRevision is one version of a run's plan and where it came from.
type PlanRevision struct {
	Version   int        `json:"version"`
	Source    string     `json:"source"` // planner | replanner | caller | edit | template
	Plan      Plan       `json:"plan"`
	Levels    [][]string `json:"levels,omitempty"` // topological levels: ids that may run together
	Mermaid   string     `json:"mermaid,omitempty"`
	Reason    string     `json:"reason,omitempty"` // why a re-plan happened
	CreatedAt time.Time  `json:"created_at"`
	// Pins are the contracts this version was checked against, by tool:
	// before it runs a step the engine compares the tool's contract now
	// with its pin (agent/pin.go). None in versions older builds wrote.
	Pins map[string]ContractPin `json:"pins,omitempty"`
	// KeysFrom is the plan version whose idempotency keys this version's
	// actions keep: a re-pin carries actions over unchanged, so a call in
	// flight before it is re-issued under the key it had (agent/pin.go).
	// 0, as in every version older builds wrote: its own.
	KeysFrom int `json:"keys_from,omitempty"`
}

// Policy decisions.
const (
	PolicyAllow          = "allow"
	PolicyRequireConfirm = "require_confirm"
	PolicyDeny           = "deny"
)

// PolicyDecision is policy's verdict on one action.
type PolicyDecision struct {
	Decision string `json:"decision"` // allow | require_confirm | deny
	Reason   string `json:"reason,omitempty"`
}

// StepStatus is how one attempt of an action ended.
type StepStatus string

// Step statuses. A started record with no end is a call that was in flight
// when the process stopped; resume re-issues it with the same key.
const (
	StepStarted   StepStatus = "started"
	StepSucceeded StepStatus = "succeeded"
	StepFailed    StepStatus = "failed"
	StepSkipped   StepStatus = "skipped"
)

// StepRecord is one attempt of one action.
type StepRecord struct {
	ActionID       string          `json:"action_id"`
	Tool           string          `json:"tool"`
	PlanVersion    int             `json:"plan_version"`
	Attempt        int             `json:"attempt"`
	IdempotencyKey string          `json:"idempotency_key,omitempty"`
	Payload        json.RawMessage `json:"payload,omitempty"` // secrets redacted
	Result         json.RawMessage `json:"result,omitempty"`
	Produced       []string        `json:"produced,omitempty"` // state keys this attempt set
	Status         StepStatus      `json:"status"`
	Error          *Error          `json:"error,omitempty"`
	StartedAt      time.Time       `json:"started_at"`
	EndedAt        time.Time       `json:"ended_at,omitzero"`
}

// InterruptKind names why a run waits for a person.
type InterruptKind string

// Interrupt kinds: each is a different question to a person, with its own
// decisions (agent.Decisions), so a client can render the right form.
const (
	InterruptClarify       InterruptKind = "clarify"
	InterruptPlanApproval  InterruptKind = "plan_approval"
	InterruptStepApproval  InterruptKind = "step_approval"
	InterruptInputRequired InterruptKind = "input_required"
	// InterruptBudgetExceeded: a budget is spent and budgets.on_exceed is
	// ask. Approve with Answers["limit"] (the budget's new limit for this
	// run) or reject.
	InterruptBudgetExceeded InterruptKind = "budget_exceeded"
	// InterruptVerifyQuestion: the critic (verifier.mode llm) asked for a
	// person instead of another try (its next was ask_user). Answer (the
	// answers go to the retry with the critic's feedback), approve (keep
	// the result as it is) or reject.
	InterruptVerifyQuestion InterruptKind = "verify_question"
)

// Interrupt kinds a person steers a run with (issue 15).
const (
	// InterruptStepFailed: an action still failed after its retries and
	// on_failure is ask. Retry (Payload: an edited payload), skip, replan
	// or abort.
	InterruptStepFailed InterruptKind = "step_failed"
	// InterruptPaused: a person asked the run to pause (pause_run, ordo
	// runs pause); it stopped at a step boundary. Continue, edit (Plan:
	// the remaining plan) or abort.
	InterruptPaused InterruptKind = "paused"
	// InterruptContractChanged: a tool the plan calls changed its contract
	// since a person approved the plan or the step (Changes says how).
	// Approve (the plan runs pinned to the new contracts, as a new plan
	// version), edit (Plan: the remaining plan) or reject.
	InterruptContractChanged InterruptKind = "contract_changed"
)

// Interrupt is what a waiting run asks for.
type Interrupt struct {
	Kind        InterruptKind             `json:"kind"`
	Message     string                    `json:"message"`
	Questions   []string                  `json:"questions,omitempty"`   // clarify
	Suggestions map[string]string         `json:"suggestions,omitempty"` // clarify (by question), input_required (by field): remembered answers
	PlanVersion int                       `json:"plan_version,omitempty"`
	Mermaid     string                    `json:"mermaid,omitempty"`   // plan_approval
	Policy      map[string]PolicyDecision `json:"policy,omitempty"`    // plan_approval
	ActionID    string                    `json:"action_id,omitempty"` // step_approval, input_required
	Tool        string                    `json:"tool,omitempty"`
	Payload     json.RawMessage           `json:"payload,omitempty"` // step_approval: the bound payload
	Fields      []string                  `json:"fields,omitempty"`  // input_required: paths still MISSING
	// Secret lists the Fields that lie in the tool's secret_fields: a
	// client asks for them without showing what is typed (input_required).
	Secret  []string    `json:"secret,omitempty"`
	Attempt int         `json:"attempt,omitempty"` // verify_question: the attempt the critic judged; step_approval: the attempt asked about
	Budget  *BudgetStop `json:"budget,omitempty"`  // budget_exceeded
	Error   *Error      `json:"error,omitempty"`   // step_failed: the last attempt's error
	// Changes are the tools whose contract changed (contract_changed).
	Changes   []ContractChange `json:"changes,omitempty"`
	CreatedAt time.Time        `json:"created_at"`
}

// DecisionKind is a person's answer to an interrupt.
type DecisionKind string

// Decision kinds; which fit depends on the interrupt.
const (
	DecisionApprove DecisionKind = "approve" // plan_approval, step_approval
	DecisionEdit    DecisionKind = "edit"    // plan_approval (Plan), step_approval (Payload)
	DecisionReject  DecisionKind = "reject"  // plan_approval, step_approval
	DecisionSkip    DecisionKind = "skip"    // step_approval
	DecisionAnswer  DecisionKind = "answer"  // clarify, input_required (Answers)
	// DecisionProceedAnyway plans a clarify interrupt's goal without answers.
	DecisionProceedAnyway DecisionKind = "proceed_anyway"
)

// Decision kinds that steer a run after a failure or a pause.
const (
	// DecisionRetry: step_failed (Payload: an edited payload); on a failed
	// or cancelled run, a fork from the step that failed.
	DecisionRetry    DecisionKind = "retry"
	DecisionReplan   DecisionKind = "replan"   // step_failed
	DecisionContinue DecisionKind = "continue" // paused
	DecisionAbort    DecisionKind = "abort"    // step_failed (fails the run), paused (cancels it)
)

// What a step that still fails after its retries does (on_failure).
const (
	OnFailureReplan = "replan" // the re-planner plans the rest (default with a model)
	OnFailureAsk    = "ask"    // a step_failed interrupt (default without a model)
	OnFailureFail   = "fail"   // the run fails with the step's error
)

// Decision resumes an interrupted run.
type Decision struct {
	Kind    DecisionKind    `json:"decision"`
	Plan    *Plan           `json:"plan,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Answers map[string]any  `json:"answers,omitempty"`
	By      string          `json:"by,omitempty"` // who decided: a user id, "auto", "memory"
	Note    string          `json:"note,omitempty"`
	// Seq, when given, is the run's sequence number at the interrupt the
	// decider saw: a run that has moved on since refuses the decision, so
	// an approval sent twice or late never answers the next interrupt.
	Seq int64 `json:"seq,omitempty"`
}

// DecisionRecord keeps each interrupt with the decision that ended it.
type DecisionRecord struct {
	Interrupt Interrupt `json:"interrupt"`
	Decision  Decision  `json:"decision"`
	At        time.Time `json:"at"`
}

// RunResult is a finished run's answer.
type RunResult struct {
	Answer   string `json:"answer"`
	Composer string `json:"composer"` // llm | template
}

// TokenUsage is what model calls used: tokens as the provider counted
// them, and their cost at the configured prices (0 for an unpriced model).
type TokenUsage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// CachedTokens are the part of InputTokens the provider read from its
	// prompt cache (usually priced lower).
	CachedTokens int64    `json:"cached_tokens,omitempty"`
	CostUSD      float64  `json:"cost_usd"`
	Models       []string `json:"models,omitempty"` // the models asked, sorted
}

// RunUsage is a run's model usage by role (the roles of Run.LLMCalls) and
// in total.
type RunUsage struct {
	ByRole map[string]TokenUsage `json:"by_role,omitempty"`
	Total  TokenUsage            `json:"total"`
}

// Add counts one call's usage under role.
func (u *RunUsage) Add(role string, t TokenUsage) {
	if u.ByRole == nil {
		u.ByRole = map[string]TokenUsage{}
	}
	u.ByRole[role] = u.ByRole[role].plus(t)
	u.Total = u.Total.plus(t)
}

// Clone is a deep copy: log entries share nothing with the run.
func (u RunUsage) Clone() RunUsage {
	out := RunUsage{ByRole: maps.Clone(u.ByRole), Total: u.Total}
	out.Total.Models = slices.Clone(u.Total.Models)
	for role, t := range out.ByRole {
		t.Models = slices.Clone(t.Models)
		out.ByRole[role] = t
	}
	return out
}

// plus returns the sum as a new value (its Models never alias t's or o's).
func (t TokenUsage) plus(o TokenUsage) TokenUsage {
	sum := TokenUsage{InputTokens: t.InputTokens + o.InputTokens, OutputTokens: t.OutputTokens + o.OutputTokens,
		CachedTokens: t.CachedTokens + o.CachedTokens, CostUSD: t.CostUSD + o.CostUSD}
	if len(t.Models)+len(o.Models) > 0 {
		sum.Models = slices.Compact(slices.Sorted(slices.Values(slices.Concat(t.Models, o.Models))))
	}
	return sum
}

// Budget is an amount of each thing a run spends: model calls (Run.LLMCalls),
// tokens (input and output), cost, steps (step records other than skipped)
// and wall time (from creation, less the time spent waiting for people).
// As a limit, zero means none.
type Budget struct {
	ModelCalls int           `json:"model_calls,omitempty" yaml:"model_calls"`
	Tokens     int64         `json:"tokens,omitempty" yaml:"tokens"`
	CostUSD    float64       `json:"cost_usd,omitempty" yaml:"cost_usd"`
	Steps      int           `json:"steps,omitempty" yaml:"steps"`
	WallTime   time.Duration `json:"wall_time,omitempty" yaml:"wall_time"`
}

// What happens when a budget is spent.
const (
	OnExceedFail = "fail" // the run fails closed with CodeBudgetExceeded
	OnExceedAsk  = "ask"  // the run waits at a budget_exceeded interrupt
)

// Budgets limit each run, and all of one user's runs in a UTC day.
type Budgets struct {
	Run      Budget `json:"run" yaml:"run"`
	UserDay  Budget `json:"user_day" yaml:"user_day"`
	OnExceed string `json:"on_exceed" yaml:"on_exceed"` // fail (default) | ask
}

// BudgetStop names a spent budget (run.tokens, user_day.cost_usd, ...),
// its limit and what was used, in the budget's unit (wall_time in
// seconds), and the work it stopped before (planner, replanner, filler,
// verifier, step).
type BudgetStop struct {
	Budget string  `json:"budget"`
	Limit  float64 `json:"limit"`
	Used   float64 `json:"used"`
	Before string  `json:"before"`
	// Cause is the failure the re-planner was to handle: approving
	// re-plans it.
	Cause *Error `json:"cause,omitempty"`
}
