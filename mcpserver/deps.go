package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/memory"
)

// Engine is the part of the Plan-then-Execute engine (agent.Engine) the
// server drives. Plan stops before execution; Execute and Resume run until
// the run completes, fails or waits for a person.
type Engine interface {
	Plan(ctx context.Context, req agent.Request) (*contracts.Run, error)
	// Run plans and executes in one call, holding the run's lease from
	// its first write to its stop, so no server's death leaves the run
	// between the two with nobody to finish it.
	Run(ctx context.Context, req agent.Request) (*contracts.Run, error)
	Execute(ctx context.Context, runID string) (*contracts.Run, error)
	Resume(ctx context.Context, runID string, d contracts.Decision) (*contracts.Run, error)
	Get(ctx context.Context, runID string) (*contracts.Run, error)
	// Log reads a run's log after a cursor (the event stream).
	Log(ctx context.Context, runID string, after int64, limit int) ([]contracts.RunDelta, error)
	// Fork starts a new run from a recorded one (fork_run).
	Fork(ctx context.Context, req agent.ForkRequest) (*contracts.Run, error)
	// Call and Confirm make the gateway's direct tool calls as runs.
	Call(ctx context.Context, req agent.CallRequest) (*contracts.Run, error)
	Confirm(ctx context.Context, runID string, d contracts.Decision, args json.RawMessage) (*contracts.Run, error)
	// ToolCandidates chooses tools for a plan (search_tools, write_plan).
	ToolCandidates(ctx context.Context, q agent.ToolQuery) ([]agent.Candidate, error)
}

// Catalog is the live tool catalog (the host).
type Catalog interface {
	List() []*contracts.Tool
}

// Availability is optionally implemented by the Catalog (*host.Host
// does): the tools whose source is down, which search_tools leaves out.
type Availability interface {
	Unavailable() []string
}

// RunLister lists stored runs; memory.Checkpointer satisfies it.
type RunLister interface {
	List(ctx context.Context, f memory.Filter) ([]memory.RunSummary, error)
}

// SourceAdmin is the host's hot add/remove API for plugins and upstream
// MCP servers (RemoveSource and Sources cover every kind of source); *host.Host satisfies it.
type SourceAdmin interface {
	AddPlugin(ctx context.Context, spec host.PluginSpec) error
	AddUpstream(ctx context.Context, spec host.UpstreamSpec) error
	RemoveSource(ctx context.Context, name string) error
	Sources() []host.SourceInfo
}

// SamplingModel decorates the model that asks the calling client (MCP
// sampling; to count its calls, say). The server gives it to Engine's
// calls (agent.WithModel) when Options.HasLLM is false.
type SamplingModel func(model llm.LLM) llm.LLM
