package contracts

import "encoding/json"

// Risk is how much harm a tool call can do.
type Risk string

// Risk levels, from harmless to irreversible.
const (
	RiskRead        Risk = "read"
	RiskWrite       Risk = "write"
	RiskDestructive Risk = "destructive"
)

// MaxTimeoutMS bounds a tool's and an action's timeout_ms (a day): a larger
// number of milliseconds overflows a time.Duration into a negative one, a
// deadline already past, and the call failed at once saying it "did not
// answer within -2346317h47m".
const MaxTimeoutMS = 24 * 60 * 60 * 1000

// Tags that policy acts on (agent/policy).
const (
	TagPII          = "pii"
	TagExternalSend = "external_send"
	TagFinancial    = "financial"
	TagAdmin        = "admin"
	TagDelete       = "delete"
	TagSharePublic  = "share_public"
)

// Contract is what a tool promises: who it is, how risky it
// is, what it takes and returns, and which state keys its result yields.
// It is plain data, as plugins send it; NewTool checks and compiles it.
type Contract struct {
	Tool           string            `json:"tool"` // "service.name"
	Service        string            `json:"service"`
	Description    string            `json:"description"`
	RiskLevel      Risk              `json:"risk_level"`
	ScopesRequired []string          `json:"scopes_required,omitempty"`
	Tags           []string          `json:"tags,omitempty"`
	InputSchema    json.RawMessage   `json:"input_schema"`
	OutputSchema   json.RawMessage   `json:"output_schema"`
	ProducesMap    map[string]string `json:"produces_map,omitempty"` // state key -> JSONPath into the result
	TimeoutMS      int               `json:"timeout_ms,omitempty"`   // at most MaxTimeoutMS
	Idempotent     bool              `json:"idempotent,omitempty"`
	// IdempotentWithKey promises that a repeated call with the same
	// idempotency key returns the first call's result and performs the
	// effect at most once, even if the tool's process died mid-call; the
	// host may then re-issue a keyed call cut off by a crash.
	IdempotentWithKey bool `json:"idempotent_with_key,omitempty"`
	// SecretFields are top-level payload fields redacted in step records
	// (matched case-insensitively, IsSecretField). NewTool adds those the
	// input schema marks writeOnly or format "password", at any depth.
	SecretFields []string `json:"secret_fields,omitempty"`
}
