package contracts

// PlanVersion is the only Action Plan schema version Ordo reads.
const PlanVersion = "1.0"

// Plan is an Action Plan (schema in action_plan.schema.json):
// actions linked by the state keys they require and produce.
type Plan struct {
	Version       string         `json:"version"`
	Goal          string         `json:"goal"`
	Timezone      string         `json:"timezone"`
	Locale        string         `json:"locale,omitempty"`
	Context       *PlanContext   `json:"context,omitempty"`
	Actions       []Action       `json:"actions"`
	FinalResponse *FinalResponse `json:"final_response,omitempty"`
	Constraints   *Constraints   `json:"constraints,omitempty"`
	// ClarificationQuestions, when present, replace a plan: the goal is too
	// ambiguous to plan and a person must answer first.
	ClarificationQuestions []string `json:"clarification_questions,omitempty"`

	// parsed is the encoding of the plan ParsePlan returned, which it
	// validated; nil for a plan built as a value. ValidatePlan does not
	// validate that encoding again (see there).
	parsed []byte
}

// PlanContext is what the planner was told.
type PlanContext struct {
	UserText          string   `json:"user_text,omitempty"`
	ConnectedServices []string `json:"connected_services,omitempty"`
	ToolCandidates    []string `json:"tool_candidates,omitempty"`
}

// Action is one tool call of a plan.
type Action struct {
	ID              string            `json:"id"`
	Tool            string            `json:"tool"`
	Intent          string            `json:"intent"`
	Summary         string            `json:"summary,omitempty"`
	Requires        []string          `json:"requires"`
	Produces        []string          `json:"produces"`
	SuccessCriteria []string          `json:"success_criteria,omitempty"`
	Risk            *ActionRisk       `json:"risk,omitempty"`
	PolicyHints     *PolicyHints      `json:"policy_hints,omitempty"`
	DependsOn       []string          `json:"depends_on,omitempty"`
	InputBindings   map[string]string `json:"input_bindings,omitempty"` // payload field -> state key
	Inputs          map[string]any    `json:"inputs,omitempty"`         // literal payload values
	Retries         *Retries          `json:"retries,omitempty"`
	TimeoutMS       int               `json:"timeout_ms,omitempty"`
}

// ActionRisk is the planner's view of an action's risk; policy trusts the
// tool contract over it.
type ActionRisk struct {
	Level Risk     `json:"level,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

// PolicyHints are the planner's hints to policy.
type PolicyHints struct {
	NeedsUserConfirmation bool `json:"needs_user_confirmation,omitempty"`
	ContainsPII           bool `json:"contains_pii,omitempty"`
	ExternalSend          bool `json:"external_send,omitempty"`
}

// Retries bounds an action's retry loop.
type Retries struct {
	MaxAttempts int `json:"max_attempts,omitempty"`
	BackoffMS   int `json:"backoff_ms,omitempty"`
}

// FinalResponse shapes the composed answer.
type FinalResponse struct {
	Style              string `json:"style,omitempty"`
	IncludeLinks       *bool  `json:"include_links,omitempty"`
	IncludeStepResults bool   `json:"include_step_results,omitempty"`
}

// Constraints limit a plan.
type Constraints struct {
	MaxActions    int   `json:"max_actions,omitempty"`
	AllowParallel *bool `json:"allow_parallel,omitempty"`
	// AllowedServices restricts tools to these services or tool-name
	// prefixes (a goal such as "use only Notion").
	AllowedServices []string `json:"allowed_services,omitempty"`
}
