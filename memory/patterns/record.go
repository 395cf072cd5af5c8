package patterns

import (
	"encoding/json"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ordo-run/ordo/contracts"
)

// Namespace names one kind of remembered pattern.
type Namespace string

// The five namespaces: what is remembered, one collection each.
const (
	NSPlan          Namespace = "plan"
	NSTool          Namespace = "tool"
	NSClarification Namespace = "clarification"
	NSBehavior      Namespace = "behavior"
	NSWorkflow      Namespace = "workflow"
)

// Namespaces lists every namespace, in a stable order.
var Namespaces = []Namespace{NSPlan, NSTool, NSClarification, NSBehavior, NSWorkflow}

// ParseNamespace reads a namespace name as a user types it ("plan",
// "Tools", " workflow "); "" and "all" mean every namespace and return "".
func ParseNamespace(s string) (Namespace, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || s == "all" {
		return "", nil
	}
	for _, ns := range Namespaces {
		if s == string(ns) || s == string(ns)+"s" {
			return ns, nil
		}
	}
	return "", contracts.Errorf(contracts.CodeInvalidInput, "unknown memory namespace %q (want plan, tool, clarification, behavior, workflow or all)", s).
		With("field", "namespace")
}

// Record is one remembered pattern. Which fields are set depends on the
// namespace; List and Show return records as they are stored.
type Record struct {
	ID        string    `json:"id"`
	Namespace Namespace `json:"namespace"`
	User      string    `json:"user"`
	// Text is what similarity is measured on: the goal (plan,
	// clarification), the step's intent and goal (tool), the tool name (behavior),
	// the template's name and goal (workflow).
	Text      string    `json:"text"`
	Tool      string    `json:"tool,omitempty"` // tool, behavior
	Successes int       `json:"successes,omitempty"`
	Failures  int       `json:"failures,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	LastUsed  time.Time `json:"last_used"`

	Plan *contracts.Plan `json:"plan,omitempty"` // plan, workflow
	Name string          `json:"name,omitempty"` // workflow
	// Learned marks a workflow template the collector made from a plan
	// that kept working (learnTemplate), not one a person saved.
	Learned bool `json:"learned,omitempty"`
	// fromTemplate marks a plan observation of a run planned from a
	// template: it has its template already, so nothing is learned from it.
	fromTemplate bool

	MeanDurationMS float64 `json:"mean_duration_ms,omitempty"` // tool
	ShouldAvoid    bool    `json:"should_avoid,omitempty"`     // tool

	Questions  []string       `json:"questions,omitempty"`   // clarification
	Answers    map[string]any `json:"answers,omitempty"`     // clarification: by question; behavior: a person's last value for each of the tool's missing fields, by field
	ReuseCount int            `json:"reuse_count,omitempty"` // clarification: uses of these answers after the first

	Approvals int `json:"approvals,omitempty"` // behavior: step approvals by a person
	Edits     int `json:"edits,omitempty"`
	Skips     int `json:"skips,omitempty"`
	Rejects   int `json:"rejects,omitempty"`
}

// Samples is how many observations back the record.
func (r Record) Samples() int {
	if r.Namespace == NSBehavior {
		return r.Approvals + r.Edits + r.Skips + r.Rejects
	}
	return r.Successes + r.Failures
}

// SuccessRate is successes per sample (for behavior: plain approvals per
// decision); 0 without samples.
func (r Record) SuccessRate() float64 {
	n := r.Samples()
	if n == 0 {
		return 0
	}
	if r.Namespace == NSBehavior {
		return float64(r.Approvals) / float64(n)
	}
	return float64(r.Successes) / float64(n)
}

// Confidence is the success rate damped by the cold-start multiplier.
func (r Record) Confidence() float64 { return r.SuccessRate() * Multiplier(r.Samples()) }

// Multiplier is the cold-start confidence multiplier: how far a
// pattern seen n times may be trusted.
func Multiplier(n int) float64 {
	switch {
	case n <= 0:
		return 0
	case n == 1:
		return 0.3
	case n == 2:
		return 0.5
	case n <= 4:
		return 0.7
	}
	return 1
}

// decodeRecord reads a record back from its stored JSON and checks what the
// rest of the package relies on, so a damaged file is refused, not trusted.
func decodeRecord(raw string) (Record, error) {
	var r Record
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return r, contracts.Errorf(contracts.CodeStore, "decode memory record: %w", err)
	}
	bad := func(field string) error {
		return contracts.Errorf(contracts.CodeStore, "memory record %q has a bad %s", r.ID, field).With("field", field)
	}
	switch {
	case r.ID == "":
		return r, bad("id")
	case !knownNamespace(r.Namespace):
		return r, bad("namespace")
	case r.Successes < 0 || r.Failures < 0 || r.ReuseCount < 0 || r.Approvals < 0 || r.Edits < 0 || r.Skips < 0 || r.Rejects < 0:
		return r, bad("counts")
	case (r.Namespace == NSPlan || r.Namespace == NSWorkflow) && r.Plan == nil:
		return r, bad("plan")
	}
	return r, nil
}

func knownNamespace(ns Namespace) bool {
	for _, n := range Namespaces {
		if n == ns {
			return true
		}
	}
	return false
}

// checkName refuses ids and names a person could not type back: empty,
// too long, invalid UTF-8 or control characters.
func checkName(field, s string, allowEmpty bool) error {
	switch {
	case s == "" && allowEmpty:
		return nil
	case s == "":
		return contracts.Errorf(contracts.CodeInvalidInput, "%s is empty", field).With("field", field)
	case len(s) > 200:
		return contracts.Errorf(contracts.CodeInvalidInput, "%s is longer than 200 bytes", field).With("field", field)
	case !utf8.ValidString(s):
		return contracts.Errorf(contracts.CodeInvalidInput, "%s is not valid UTF-8", field).With("field", field)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return contracts.Errorf(contracts.CodeInvalidInput, "%s contains control characters", field).With("field", field)
	}
	return nil
}

// Bounds on what a behavior record keeps of a person's input answers: a
// suggestion is something a person typed, and one user's answers must not
// grow a record (read on every input_required of the tool) without limit.
const (
	// MaxInputAnswers is how many fields' values one tool's record keeps,
	// the latest run's first.
	MaxInputAnswers = 64
	// MaxInputAnswerBytes bounds one remembered value (as JSON); a longer
	// one is not remembered.
	MaxInputAnswerBytes = 1024
	// MaxRecordBytes bounds one record as stored (JSON), mostly its plan.
	MaxRecordBytes = 64 << 10
)

// tooBig refuses a record over MaxRecordBytes, naming what makes a record
// big: its plan's literals, or a person's answers.
func tooBig(r Record) error {
	raw, err := json.Marshal(r)
	if err != nil || len(raw) <= MaxRecordBytes {
		return nil // an encoding error is store's to report
	}
	field := "plan"
	if r.Plan == nil {
		field = "answers"
	}
	return contracts.Errorf(contracts.CodeInvalidInput, "%s record is %d bytes, over the %d memory keeps", r.Namespace, len(raw), MaxRecordBytes).
		With("field", field).With("limit", MaxRecordBytes)
}
