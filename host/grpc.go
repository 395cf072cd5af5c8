package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/grpctrace"
	pb "github.com/ordo-run/ordo/plugins/proto"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// toolPluginClient is the generated client; named here for the assertion
// on what go-plugin dispenses.
type toolPluginClient = pb.ToolPluginClient

// grpcDialOptions instrument the connection to a plugin: each call made
// inside a trace is a client span whose trace context travels in the gRPC
// metadata, so a plugin that traces (sdk.Serve passes the context on)
// continues the host's trace. A call outside any trace skips otelgrpc
// altogether (see grpctrace); a process that set up no tracing (no global
// tracer provider or propagator, as Ordo without OTEL_* variables) cannot
// trace a call, and its connections get no stats handler at all.
//
// A plugin's answers are bounded at contracts.MaxMessageBytes: go-plugin
// lifts gRPC's bound to 2 GiB, enough for one answer to exhaust Ordo's
// memory.
func grpcDialOptions() []grpc.DialOption {
	opts := []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(contracts.MaxMessageBytes))}
	if grpctrace.Configured() {
		opts = append(opts, grpc.WithStatsHandler(grpctrace.Client()))
	}
	return opts
}

// grpcProvider is the ToolProvider of one plugin process.
type grpcProvider struct {
	name            string
	client          *plugin.Client
	pid             int // of the process, for gone
	rpc             pb.ToolPluginClient
	describeTimeout time.Duration
	described       *pb.DescribeResponse
	watchOnce       sync.Once
	exited          func() bool // set by watchOnce (see watchExit)
}

// version calls Describe once and keeps the answer for Describe.
func (p *grpcProvider) version(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, p.describeTimeout)
	defer cancel()
	resp, err := p.rpc.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		return "", contracts.Errorf(contracts.CodePluginRefused, "plugin %q describe: %w", p.name, err).With("plugin", p.name)
	}
	p.described = resp
	return resp.GetPluginVersion(), nil
}

// Describe decodes the contracts the plugin sent at start.
func (p *grpcProvider) Describe(context.Context) ([]contracts.Contract, error) {
	out := make([]contracts.Contract, 0, len(p.described.GetContracts()))
	for i, raw := range p.described.GetContracts() {
		var c contracts.Contract
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, contracts.Errorf(contracts.CodeInvalidContract, "plugin %q contract #%d is not a contract object: %w", p.name, i, err).
				With("plugin", p.name)
		}
		out = append(out, c)
	}
	return out, nil
}

// Call sends one call. Transport failures are coded: a deadline is a
// timeout, a lost connection is a crash.
func (p *grpcProvider) Call(ctx context.Context, tool string, payload json.RawMessage, key string) (json.RawMessage, error) {
	req := &pb.CallRequest{Tool: tool, PayloadJson: payload, IdempotencyKey: key}
	if dl, ok := ctx.Deadline(); ok {
		req.DeadlineUnixMs = dl.UnixMilli()
	}
	if p.gone() { // it cannot reach the plugin: dispatch waits for the restart
		return nil, p.transportError(ctx, tool, errors.New("the plugin process has exited"), false)
	}
	// to stays empty unless the call got a connection to the plugin; gRPC
	// fails fast (no WaitForReady) by default.
	var to peer.Peer
	resp, err := p.rpc.Call(untimed{ctx}, req, grpc.Peer(&to))
	if err != nil {
		return nil, p.transportError(ctx, tool, err, to.Addr != nil)
	}
	switch o := resp.GetOutcome().(type) {
	case *pb.CallResponse_ResultJson:
		return o.ResultJson, nil
	case *pb.CallResponse_Error:
		return nil, pluginError(o.Error).With("tool", tool).With("plugin", p.name)
	}
	return nil, contracts.Errorf(contracts.CodeToolInvalidOutput, "plugin %q answered %s with neither result nor error", p.name, tool).
		With("tool", tool).With("plugin", p.name)
}

// pluginCodes are the codes a plugin may give its errors: those of a tool
// failure. The others are the host's and the engine's to give (a 6004 would
// make the call wait for a restart, a 6002 retry it, a 5001 stop a run for
// approval), so a plugin that sends one gets a plain tool failure naming it.
var pluginCodes = []contracts.Code{contracts.CodeToolFailed, contracts.CodeSchemaViolation, contracts.CodeToolTimeout,
	contracts.CodeToolInvalidOutput}

// pluginError decodes the error a plugin answered with.
func pluginError(te *pb.ToolError) *contracts.Error {
	e := sdk.ErrorFromWire(te)
	if !slices.Contains(pluginCodes, e.Code) {
		e = e.With("plugin_code", int(e.Code))
		e.Code = contracts.CodeToolFailed
	}
	return e
}

// untimed hides a call's deadline from gRPC, which would send it as
// grpc-timeout: the plugin's gRPC server would then arm a timer for every
// call, and arming one wakes an idle plugin's runtime (microseconds on
// each call; issue 14). The deadline travels in the request instead
// (deadline_unix_ms), and ctx still ends the call when it passes.
type untimed struct{ context.Context }

func (untimed) Deadline() (time.Time, bool) { return time.Time{}, false }

// transportError codes a failed call. One that never got a connection
// (sent is false: the process was gone, or not yet reachable) cannot have
// acted, so it is unavailable and retryable; one that was sent and lost
// its connection may have acted, so it is a crash.
func (p *grpcProvider) transportError(ctx context.Context, tool string, err error, sent bool) error {
	code := contracts.CodeToolFailed
	switch st, _ := status.FromError(err); {
	case st.Code() == codes.DeadlineExceeded || ctx.Err() == context.DeadlineExceeded:
		code = contracts.CodeToolTimeout
	case ctx.Err() != nil:
		code = contracts.CodeCancelled
	case !sent:
		code = contracts.CodeToolUnavailable
	case st.Code() == codes.Unavailable || st.Code() == codes.Canceled || p.client.Exited():
		code = contracts.CodeToolCrashed
	}
	ce := contracts.Errorf(code, "plugin %q, tool %s: %w", p.name, tool, err).With("tool", tool).With("plugin", p.name)
	ce.Retryable = code == contracts.CodeToolUnavailable
	return ce
}

// gone reports whether the plugin's process has exited: go-plugin noticed,
// or, in the moment before it does (it reaps the process first), the
// kernel said so (watchExit). A call sent then would fail as a crash
// although it never reached the plugin.
func (p *grpcProvider) gone() bool {
	if p.client.Exited() {
		return true // reaped: its pid may name another process by now
	}
	p.watchOnce.Do(func() { p.exited = watchExit(p.pid) })
	return p.client.Exited() || p.exited()
}

// health asks the plugin whether it can serve.
func (p *grpcProvider) health(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := p.rpc.Health(ctx, &pb.HealthRequest{})
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	if !resp.GetOk() {
		return fmt.Errorf("plugin reports unhealthy: %s", resp.GetMessage())
	}
	return nil
}

// Close kills the plugin process (gracefully first, then SIGKILL) and
// then whatever is left of its process group.
func (p *grpcProvider) Close() error {
	p.client.Kill()
	killGroup(p.pid)
	return nil
}
