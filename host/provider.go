package host

import (
	"context"
	"encoding/json"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// ToolProvider is a source of tools: a plugin process, Go functions in this
// process, or an upstream server (an UpstreamSource). The host only
// ever talks to tools through it.
type ToolProvider interface {
	// Describe returns the contracts of the tools the provider serves.
	Describe(ctx context.Context) ([]contracts.Contract, error)
	// Call runs one tool once; ctx carries the deadline. Errors should be
	// *contracts.Error; the host codes any other error as CodeToolFailed.
	Call(ctx context.Context, tool string, payload json.RawMessage, idempotencyKey string) (json.RawMessage, error)
	// Close releases the provider; no calls follow it.
	Close() error
}

// InProcess serves Go tools inside Ordo through the same sdk.Server code a
// plugin binary runs (sdk.Server.Run: the host's chain checks payloads and
// results, once, as for plugins). It fails with CodeInvalidContract on a
// broken contract.
func InProcess(tools ...sdk.Tool) (ToolProvider, error) {
	s, err := sdk.NewServer(tools...)
	if err != nil {
		return nil, err
	}
	return inProcess{s}, nil
}

type inProcess struct{ s *sdk.Server }

func (p inProcess) Describe(context.Context) ([]contracts.Contract, error) {
	return p.s.Describe(), nil
}

func (p inProcess) Call(ctx context.Context, tool string, payload json.RawMessage, key string) (json.RawMessage, error) {
	return p.s.Run(ctx, tool, payload, key)
}

func (p inProcess) Close() error { return nil }
