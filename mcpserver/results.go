package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/patterns"
)

// errorResult is an MCP tool error carrying Ordo's code: its text is the
// JSON object {code, category, message, details, retryable}. It has no
// structured content on purpose: clients validate structured content
// against the tool's output schema, which describes success (the official
// TypeScript SDK rejects the whole call otherwise), and the MCP SDKs' own
// tool errors are text too.
func errorResult(err error) *mcp.CallToolResult {
	e := contracts.AsError(err)
	body := map[string]any{"code": int(e.Code), "category": e.Code.Category(), "message": e.Message}
	if len(e.Details) > 0 {
		body["details"] = e.Details
	}
	if e.Retryable {
		body["retryable"] = true
	}
	text, jerr := json.Marshal(body)
	if jerr != nil {
		text = []byte(fmt.Sprintf(`{"code":%d,"category":%q,"message":%q}`, e.Code, e.Code.Category(), e.Message))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(text))}, IsError: true}
}

// okResult returns v as structured content and as its JSON text, for
// clients that read only text.
func okResult(v any) (*mcp.CallToolResult, error) {
	text, err := json.Marshal(v)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "encode result: %w", err)
	}
	var structured any
	if err := json.Unmarshal(text, &structured); err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "encode result: %w", err)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(text))},
		StructuredContent: structured,
	}, nil
}

// RunView is what plan, execute and approve return: the parts of a run a
// caller acts on next.
type RunView struct {
	RunID       string                              `json:"run_id"`
	Status      string                              `json:"status"`
	Goal        string                              `json:"goal,omitempty"`
	PlanVersion int                                 `json:"plan_version,omitempty"`
	Plan        *contracts.Plan                     `json:"plan,omitempty"`
	Mermaid     string                              `json:"mermaid,omitempty"`
	Policy      map[string]contracts.PolicyDecision `json:"policy,omitempty"`
	Questions   []string                            `json:"questions,omitempty"`
	Interrupt   *InterruptView                      `json:"interrupt,omitempty"`
	Result      *contracts.RunResult                `json:"result,omitempty"`
	Error       *contracts.Error                    `json:"error,omitempty"`
	Steps       []StepView                          `json:"steps,omitempty"`
	LLMCalls    map[string]int                      `json:"llm_calls,omitempty"`
	Note        string                              `json:"note,omitempty"`
	// Template is a saved workflow template matching the goal (plan).
	Template *patterns.TemplateMatch `json:"template,omitempty"`
}

// InterruptView is a waiting run's question, with the decisions approve
// accepts for it.
type InterruptView struct {
	Kind      contracts.InterruptKind `json:"kind"`
	Message   string                  `json:"message"`
	Questions []string                `json:"questions,omitempty"`
	ActionID  string                  `json:"action_id,omitempty"`
	Tool      string                  `json:"tool,omitempty"`
	Payload   json.RawMessage         `json:"payload,omitempty"`
	Fields    []string                `json:"fields,omitempty"`
	Secret    []string                `json:"secret,omitempty"` // input_required: the Fields that are secret (see Note)
	Mermaid   string                  `json:"mermaid,omitempty"`
	Budget    *contracts.BudgetStop   `json:"budget,omitempty"` // budget_exceeded: approve with answers.limit
	Error     *contracts.Error        `json:"error,omitempty"`  // step_failed: why the last attempt failed
	// Changes are the tools whose contract changed since the plan or the
	// step was approved (contract_changed).
	Changes []contracts.ContractChange `json:"changes,omitempty"`
	// Suggestions are remembered answers: to the questions (clarify), by
	// question; for the fields (input_required), by field.
	Suggestions map[string]string `json:"suggestions,omitempty"`
	Decisions   []string          `json:"decisions"`
	// Seq is the run's sequence number at this interrupt: approve with it
	// answers this interrupt only (a later one refuses it).
	Seq int64 `json:"seq"`
}

// StepView is one step attempt without its payload and result (those are
// in run_status).
type StepView struct {
	ActionID string           `json:"action_id"`
	Tool     string           `json:"tool"`
	Attempt  int              `json:"attempt"`
	Status   string           `json:"status"`
	Produced []string         `json:"produced,omitempty"`
	Error    *contracts.Error `json:"error,omitempty"`
}

// viewMode picks what a view shows: plan shows the plan and names waiting
// states for what they wait for; execute shows steps and the answer.
type viewMode int

const (
	planView viewMode = iota
	execView
)

func newRunView(run *contracts.Run, mode viewMode) *RunView {
	v := &RunView{RunID: run.ID, Status: string(run.Status), Goal: run.Goal, Result: run.Result, Error: run.Error}
	if n := len(run.Plans); n > 0 {
		rev := run.Plans[n-1]
		v.PlanVersion = rev.Version
		if mode == planView {
			v.Plan, v.Mermaid, v.Policy = &rev.Plan, rev.Mermaid, run.Policy
		}
	}
	if in := run.Interrupt; in != nil && run.Status == contracts.RunInterrupted {
		v.Interrupt = &InterruptView{Kind: in.Kind, Message: in.Message, Questions: in.Questions, ActionID: in.ActionID,
			Tool: in.Tool, Payload: in.Payload, Fields: in.Fields, Secret: in.Secret, Mermaid: in.Mermaid, Budget: in.Budget, Error: in.Error, Changes: in.Changes, Decisions: decisionsFor(in.Kind),
			Suggestions: in.Suggestions, Seq: run.Seq}
		if mode == planView {
			switch in.Kind {
			case contracts.InterruptPlanApproval:
				v.Status = "awaiting_approval"
			case contracts.InterruptClarify:
				v.Status, v.Questions = "needs_clarification", in.Questions
			}
		}
	}
	if mode == execView {
		v.Steps = stepViews(run.Steps)
		v.LLMCalls = run.LLMCalls
	}
	return v
}

// stepViews keeps the latest record of each attempt: the record of a
// finished attempt follows its "started" record.
func stepViews(steps []contracts.StepRecord) []StepView {
	type key struct {
		version, attempt int
		action           string
	}
	at := map[key]int{}
	var out []StepView
	for _, st := range steps {
		v := StepView{ActionID: st.ActionID, Tool: st.Tool, Attempt: st.Attempt, Status: string(st.Status), Produced: st.Produced, Error: st.Error}
		k := key{st.PlanVersion, st.Attempt, st.ActionID}
		if i, ok := at[k]; ok {
			out[i] = v
			continue
		}
		at[k] = len(out)
		out = append(out, v)
	}
	return out
}

// decisionsFor lists the decisions that fit an interrupt kind.
func decisionsFor(k contracts.InterruptKind) []string {
	switch k {
	case contracts.InterruptPlanApproval:
		return []string{"approve", "edit", "reject"}
	case contracts.InterruptStepApproval:
		return []string{"approve", "edit", "skip", "reject"}
	case contracts.InterruptBudgetExceeded:
		return []string{"approve", "reject"}
	case contracts.InterruptVerifyQuestion, contracts.InterruptClarify, contracts.InterruptStepFailed, contracts.InterruptPaused, contracts.InterruptContractChanged:
		return decisionNames(k)
	default:
		return []string{"answer"}
	}
}

// runResult renders a run: a failed run is a tool error carrying the run's
// coded error with the view in its details; anything else is a result.
func runResult(run *contracts.Run, mode viewMode, note string) (*mcp.CallToolResult, error) {
	v := newRunView(run, mode)
	v.Note = note
	if run.Status == contracts.RunFailed {
		e := run.Error
		if e == nil {
			e = contracts.Errorf(contracts.CodeInternal, "run failed without an error record")
		}
		return errorResult(e.WithDetails(map[string]any{"run_id": run.ID, "status": string(run.Status), "steps": v.Steps})), nil
	}
	return okResult(v)
}
