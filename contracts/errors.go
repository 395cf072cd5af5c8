package contracts

import (
	"errors"
	"fmt"
	"maps"
)

// Code classifies an error for users and clients. The thousands digit is the
// category, so a client can act on a code it does not know: 1 validation,
// 2 auth, 3 session, 4 agent, 5 human-in-the-loop, 6 tool, 7 LLM,
// 8 external, 9 internal.
type Code int

// Validation errors (1000s): the input was wrong; nothing was changed.
const (
	CodeInvalidInput        Code = 1000 // a request field is missing or malformed
	CodeInvalidJSON         Code = 1001 // text holds no parsable JSON object
	CodeSchemaViolation     Code = 1002 // a value does not satisfy its JSON Schema
	CodeUnknownTool         Code = 1003 // a plan names a tool the catalog lacks
	CodeDuplicateAction     Code = 1004 // two actions share an id
	CodeUnknownDependency   Code = 1005 // depends_on names an unknown action
	CodeUnsatisfiedRequires Code = 1006 // a required key nobody produces
	CodeUnproducibleKey     Code = 1007 // produces a key the tool cannot yield
	CodeCycle               Code = 1008 // the dependency graph has a cycle
	CodeTooManyActions      Code = 1009 // more actions than max_actions
	CodeServiceNotAllowed   Code = 1010 // a tool outside the allowed services
	CodeInvalidContract     Code = 1011 // a tool contract is broken
	CodeAmbiguousReference  Code = 1012 // a dependency reference matches no single action
	CodeMissingPath         Code = 1013 // a produces_map path found nothing in a result
	CodeInvalidConfig       Code = 1014 // a configuration key has a bad value
	CodeMissingValues       Code = 1015 // reserved: was a person's payload holding "MISSING" (now their data, see Missing)
	CodeJSONTooDeep         Code = 1016 // JSON nests deeper than MaxJSONDepth
)

// Auth errors (2000s).
const (
	CodeUnauthorized Code = 2001 // no or wrong credentials
	CodeForbidden    Code = 2003 // authenticated but lacks the role
	CodeScopeMissing Code = 2004 // the user lacks a scope a tool requires
	CodePolicyDenied Code = 2010 // policy denied an action
)

// Session errors (3000s): runs and their checkpoints.
const (
	CodeRunNotFound        Code = 3001 // no run with that id
	CodeSequenceConflict   Code = 3002 // a stale writer tried to advance a run
	CodeRunNotInterrupted  Code = 3003 // a decision for a run that waits for none
	CodeLeaseHeld          Code = 3004 // another server drives the run
	CodeCheckpointFormat   Code = 3005 // a checkpoint this build cannot read
	CodeRunAlreadyFinished Code = 3006 // the run ended; it cannot be resumed
	CodeTooManyTasks       Code = 3007 // the user has as many MCP tasks running as allowed
)

// Agent errors (4000s): the engine could not reach the goal.
const (
	CodePlanFailed         Code = 4001 // no valid plan could be made
	CodeReplanExhausted    Code = 4002 // the re-plan budget is spent
	CodeVerificationFailed Code = 4003 // a step's result did not pass verification
	CodeNoLLM              Code = 4004 // the work needs a model and none is configured
	CodeCancelled          Code = 4005 // the run was cancelled
	CodeBudgetExceeded     Code = 4006 // a run or daily budget is spent (details: budget)
	CodeContractChanged    Code = 4007 // a tool's contract changed since the plan was checked, which no longer checks against it
)

// Human-in-the-loop errors (5000s).
const (
	CodeApprovalRequired Code = 5001 // policy requires a person to confirm
	CodeInputRequired    Code = 5002 // a person must supply values
	CodeInvalidDecision  Code = 5003 // the decision does not fit the interrupt
	CodeRejected         Code = 5004 // a person rejected the plan
)

// Tool errors (6000s).
const (
	CodeToolFailed        Code = 6000 // the tool reported a failure
	CodeToolTimeout       Code = 6001 // the call exceeded its deadline
	CodeToolCrashed       Code = 6002 // the tool's process died during the call
	CodeToolInvalidOutput Code = 6003 // the result violates the output schema
	CodeToolUnavailable   Code = 6004 // the tool's source is down
	CodePluginRefused     Code = 6005 // a plugin could not be admitted
	CodeChecksumMismatch  Code = 6006 // a plugin binary does not match its checksum
	CodeProtocolMismatch  Code = 6007 // a plugin speaks another protocol version
)

// LLM errors (7000s).
const (
	CodeLLMFailed        Code = 7001 // the model endpoint failed
	CodeLLMInvalidOutput Code = 7002 // the model's answer is unusable
	CodeLLMTimeout       Code = 7003 // the model did not answer in time
)

// External (8000s) and internal (9000s) errors.
const (
	CodeExternal Code = 8001 // a service outside Ordo failed
	CodeInternal Code = 9001 // a bug or an unexpected condition
	CodeStore    Code = 9002 // the run store failed
)

// Category names the code's range, for logs and clients.
func (c Code) Category() string {
	switch c / 1000 {
	case 1:
		return "validation"
	case 2:
		return "auth"
	case 3:
		return "session"
	case 4:
		return "agent"
	case 5:
		return "hitl"
	case 6:
		return "tool"
	case 7:
		return "llm"
	case 8:
		return "external"
	default:
		return "internal"
	}
}

// Error is Ordo's coded error. It serialises to JSON for clients and audit
// trails, and matches another *Error of the same code under errors.Is.
type Error struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
	// Retryable marks tool errors that a retry may cure.
	Retryable bool  `json:"retryable,omitempty"`
	cause     error `json:"-"`
}

// Errorf builds a coded error. A %w verb in format is kept as the cause.
func Errorf(code Code, format string, args ...any) *Error {
	wrapped := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: wrapped.Error(), cause: errors.Unwrap(wrapped)}
}

// With returns a copy of the error with one more detail; e itself is never
// changed, so an error already returned or stored elsewhere (a run record,
// another goroutine's result) stays as it was. Chains such as
// Errorf(...).With(k, v).With(k2, v2) build the error step by step.
func (e *Error) With(key string, value any) *Error {
	return e.WithDetails(map[string]any{key: value})
}

// WithDetails returns a copy of the error with every entry of details
// added (replacing a detail of the same key), leaving e unchanged; it is how
// one error takes over another's details.
func (e *Error) WithDetails(details map[string]any) *Error {
	out := *e
	out.Details = make(map[string]any, len(e.Details)+len(details))
	maps.Copy(out.Details, e.Details)
	maps.Copy(out.Details, details)
	return &out
}

func (e *Error) Error() string { return fmt.Sprintf("ordo %d: %s", e.Code, e.Message) }

// Unwrap exposes the cause given with %w.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is an *Error with the same code, so callers can
// write errors.Is(err, &contracts.Error{Code: contracts.CodeCycle}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// CodeOf returns the code of the first *Error in err's chain, or CodeInternal
// for an uncoded error and 0 for nil.
func CodeOf(err error) Code {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// AsError returns err as a coded error, wrapping an uncoded one as internal.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: err.Error(), cause: err}
}
