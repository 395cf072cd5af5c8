package sdk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ordo-run/ordo/contracts"
)

// Call is one invocation of a tool as a handler sees it.
type Call struct {
	Tool string
	// Payload has already passed the input schema. Numbers are json.Number.
	Payload map[string]any
	// IdempotencyKey is the same for every attempt of one plan step: a
	// handler with side effects returns its first result for a repeated key.
	IdempotencyKey string

	raw json.RawMessage // the payload as it arrived, for Decode
}

// Decode copies the payload into v (a pointer to a struct, usually) through
// JSON, so struct tags and json.Number conversion apply as usual. A payload
// that does not fit v is a schema violation (1002), one of the codes a
// plugin may answer with. In a call the SDK made it reads the payload as it
// arrived (one decoding, not an encoding of Payload and a decoding), so
// changes a handler made to Payload do not show in it.
func (c Call) Decode(v any) error {
	data := []byte(c.raw)
	if len(data) == 0 {
		var err error
		if data, err = json.Marshal(c.Payload); err != nil {
			return contracts.Errorf(contracts.CodeSchemaViolation, "payload of %s: %w", c.Tool, err)
		}
	}
	if err := json.Unmarshal(data, v); err != nil {
		return contracts.Errorf(contracts.CodeSchemaViolation, "payload of %s: %w", c.Tool, err).With("tool", c.Tool)
	}
	return nil
}

// Handler runs one tool call. The result must marshal to JSON that
// satisfies the tool's output schema. Return ToolError for failures the
// caller should see as such; any other error becomes a non-retryable one.
type Handler func(ctx context.Context, call Call) (any, error)

// Tool is a contract with the code that fulfils it.
type Tool struct {
	Contract contracts.Contract
	Handler  Handler
}

// ToolError reports a failure of the tool itself (contracts.CodeToolFailed).
// retryable says whether repeating the same call may succeed; the host
// retries such errors with backoff.
func ToolError(retryable bool, format string, args ...any) error {
	e := contracts.Errorf(contracts.CodeToolFailed, format, args...)
	e.Retryable = retryable
	return e
}

// describePanic makes the error of a recovered panic.
func describePanic(tool string, r any) error {
	return contracts.Errorf(contracts.CodeToolFailed, "tool %s panicked: %v", tool, fmt.Sprint(r)).With("tool", tool)
}
