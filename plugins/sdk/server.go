package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/ordo-run/ordo/contracts"
)

// Server runs a set of tools without any transport. NewServer checks the
// contracts once; Call and Run are safe for concurrent use.
type Server struct {
	tools map[string]entry
	names []string // sorted, for a stable Describe
}

type entry struct {
	tool    *contracts.Tool
	handler Handler
}

// NewServer checks every contract (contracts.NewTool), refuses duplicate
// names and missing handlers, and returns a Server for the tools.
func NewServer(tools ...Tool) (*Server, error) {
	s := &Server{tools: make(map[string]entry, len(tools))}
	for i, t := range tools {
		ct, err := contracts.NewTool(t.Contract)
		if err != nil {
			return nil, contracts.Errorf(contracts.CodeInvalidContract, "tool #%d (%q): %w", i, t.Contract.Tool, err).
				With("tool", t.Contract.Tool)
		}
		name := ct.Name()
		if t.Handler == nil {
			return nil, contracts.Errorf(contracts.CodeInvalidContract, "tool %q has no handler", name).With("tool", name)
		}
		if _, dup := s.tools[name]; dup {
			return nil, contracts.Errorf(contracts.CodeInvalidContract, "tool %q declared twice", name).With("tool", name)
		}
		s.tools[name] = entry{tool: ct, handler: t.Handler}
		s.names = append(s.names, name)
	}
	sort.Strings(s.names)
	return s, nil
}

// Describe returns the contracts, sorted by tool name.
func (s *Server) Describe() []contracts.Contract {
	out := make([]contracts.Contract, 0, len(s.names))
	for _, n := range s.names {
		out = append(out, s.tools[n].tool.Contract)
	}
	return out
}

// Call validates payload against the tool's input schema, runs the handler
// (a panic becomes a CodeToolFailed error), marshals the result and
// validates it against the output schema. Every error is a *contracts.Error:
// CodeUnknownTool, CodeSchemaViolation, CodeToolFailed (Retryable as the
// handler said), CodeToolTimeout or CodeToolInvalidOutput, or whatever coded
// error the handler returned. Call is for callers that do not check the
// schemas themselves (tests of a plugin's tools, say); behind an Ordo host
// the SDK uses Run.
func (s *Server) Call(ctx context.Context, tool string, payload json.RawMessage, idempotencyKey string) (json.RawMessage, error) {
	return s.call(ctx, tool, payload, idempotencyKey, true)
}

// Run is Call without the two schema checks, for a caller that makes them
// itself: the Ordo host checks every payload against the input schema
// before it sends it and every result against the output schema after it
// returns (with the same codes, CodeSchemaViolation and
// CodeToolInvalidOutput), so the gRPC service and the host's in-process
// provider run each call through Run and each value is checked once. Run
// still refuses a payload that is not a JSON object (CodeSchemaViolation)
// and a result that does not marshal (CodeToolInvalidOutput).
func (s *Server) Run(ctx context.Context, tool string, payload json.RawMessage, idempotencyKey string) (json.RawMessage, error) {
	return s.call(ctx, tool, payload, idempotencyKey, false)
}

func (s *Server) call(ctx context.Context, tool string, payload json.RawMessage, idempotencyKey string, check bool) (json.RawMessage, error) {
	e, ok := s.tools[tool]
	if !ok {
		return nil, contracts.Errorf(contracts.CodeUnknownTool, "no tool %q in this plugin", tool).With("tool", tool)
	}
	args, err := decodePayload(tool, payload)
	if err != nil {
		return nil, err
	}
	if check {
		if err := e.tool.ValidateInput(args); err != nil {
			return nil, err
		}
	}
	result, err := runHandler(ctx, e.handler, Call{Tool: tool, Payload: args, IdempotencyKey: idempotencyKey, raw: payload})
	if err != nil {
		return nil, handlerError(ctx, tool, err)
	}
	out, err := json.Marshal(result)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeToolInvalidOutput, "result of %s does not marshal to JSON: %w", tool, err).With("tool", tool)
	}
	if !check {
		return out, nil
	}
	decoded, err := contracts.DecodeJSON(out)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeToolInvalidOutput, "result of %s: %w", tool, err).With("tool", tool)
	}
	if err := e.tool.ValidateOutput(decoded); err != nil {
		return nil, err
	}
	return out, nil
}

// decodePayload parses a payload, which must be a JSON object.
func decodePayload(tool string, payload json.RawMessage) (map[string]any, error) {
	if len(payload) == 0 {
		return map[string]any{}, nil
	}
	v, err := contracts.DecodeJSON(payload)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeSchemaViolation, "payload of %s: %w", tool, err).With("tool", tool)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeSchemaViolation, "payload of %s must be a JSON object", tool).With("tool", tool)
	}
	return m, nil
}

// runHandler calls h, turning a panic into an error.
func runHandler(ctx context.Context, h Handler, call Call) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, describePanic(call.Tool, r)
		}
	}()
	return h(ctx, call)
}

// handlerError gives an uncoded handler error its code. A handler that
// gave up because the deadline passed reports a timeout.
func handlerError(ctx context.Context, tool string, err error) error {
	var ce *contracts.Error
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return contracts.Errorf(contracts.CodeToolTimeout, "tool %s: %w", tool, err).With("tool", tool)
	}
	return contracts.Errorf(contracts.CodeToolFailed, "tool %s: %w", tool, err).With("tool", tool)
}
