package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/hashicorp/go-plugin"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/grpctrace"
	pb "github.com/ordo-run/ordo/plugins/proto"
)

// Handshake is the go-plugin handshake of protocol version 1. Host and
// plugin refuse each other unless all three values match. Treat it as a
// constant.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "ORDO_PLUGIN",
	MagicCookieValue: "ordo-tool-plugin-7d3f9b1e0c5a4e28",
}

// PluginName is the name the ToolPlugin service is dispensed under.
const PluginName = "tools"

// GRPCPlugin is the go-plugin glue for the ToolPlugin service, used on both
// sides: a plugin sets Impl; the host only needs the client half.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl pb.ToolPluginServer
}

// GRPCServer registers the service on the plugin's gRPC server.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterToolPluginServer(s, p.Impl)
	return nil
}

// GRPCClient returns a pb.ToolPluginClient for the host.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pb.NewToolPluginClient(c), nil
}

// Serve checks the tools' contracts and serves them over go-plugin gRPC
// until the host stops the plugin. A broken contract ends the process with
// the error on stderr (which the host logs). It must be called from main.
func Serve(tools ...Tool) {
	s, err := NewServer(tools...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "[ERROR] ordo plugin:", err) // the prefix is the level go-plugin logs it at
		os.Exit(1)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{PluginName: &GRPCPlugin{Impl: NewGRPCService(s, BuildVersion())}},
		GRPCServer:      grpcServer,
	})
}

// Main is a plugin command's main: it serves the tools build returns
// (tools configured from the environment, say). A build error is printed
// after name, the command's name, and ends the process before anything
// is served.
func Main(name string, build func() ([]Tool, error)) {
	tools, err := build()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	Serve(tools...)
}

// grpcServer is go-plugin's gRPC server with each call's trace context
// (sent by the host, see host's grpcDialOptions) taken into the handler's
// context, so a plugin that installs an OpenTelemetry tracer provider
// (globally, before Serve) continues the host's trace. A call the host
// sends outside any trace skips otelgrpc (see grpctrace); a plugin that
// installed no tracer provider or propagator serves without otelgrpc.
//
// A call may carry more than gRPC's default 4 MiB: state bound into it (at
// most contracts.MaxMessageBytes, the agent checks) plus the plan's own
// inputs (the plan came in one model answer, at most as much again). At
// 4 MiB, files.write of a 5 MB text failed with a gRPC size error.
func grpcServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.MaxRecvMsgSize(2*contracts.MaxMessageBytes))
	if !grpctrace.Configured() {
		return plugin.DefaultGRPCServer(opts)
	}
	return plugin.DefaultGRPCServer(append(opts, grpc.StatsHandler(grpctrace.Server(
		otelgrpc.WithPropagators(propagation.TraceContext{})))))
}

// BuildVersion describes the running binary: its module version and, when
// built from a VCS checkout, the revision.
func BuildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += "+" + s.Value[:12]
		}
	}
	return v
}

// NewGRPCService adapts a Server to the ToolPlugin gRPC service.
func NewGRPCService(s *Server, version string) pb.ToolPluginServer {
	return &service{s: s, version: version}
}

type service struct {
	pb.UnimplementedToolPluginServer
	s       *Server
	version string
}

func (g *service) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	resp := &pb.DescribeResponse{PluginVersion: g.version}
	for _, c := range g.s.Describe() {
		b, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		resp.Contracts = append(resp.Contracts, b)
	}
	return resp, nil
}

func (g *service) Call(ctx context.Context, req *pb.CallRequest) (*pb.CallResponse, error) {
	// Ordo's host sends its deadline as deadline_unix_ms, not as a gRPC
	// deadline, and ends the call itself when it passes (which cancels
	// ctx): the handler's ctx reports the deadline, and no timer is armed
	// here for it (one per call would wake the plugin's idle runtime).
	if _, set := ctx.Deadline(); !set && req.DeadlineUnixMs > 0 {
		ctx = hostDeadline{ctx, time.UnixMilli(req.DeadlineUnixMs)}
	}
	out, err := g.s.Run(ctx, req.Tool, req.PayloadJson, req.IdempotencyKey)
	if err != nil {
		return &pb.CallResponse{Outcome: &pb.CallResponse_Error{Error: ErrorToWire(err)}}, nil
	}
	return &pb.CallResponse{Outcome: &pb.CallResponse_ResultJson{ResultJson: out}}, nil
}

// hostDeadline is a call's context with the host's deadline: ended by
// the host, it reports context.DeadlineExceeded once the deadline passed.
type hostDeadline struct {
	context.Context
	deadline time.Time
}

func (c hostDeadline) Deadline() (time.Time, bool) { return c.deadline, true }

func (c hostDeadline) Err() error {
	err := c.Context.Err()
	if err != nil && !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return err
}

func (g *service) Health(context.Context, *pb.HealthRequest) (*pb.HealthResponse, error) {
	return &pb.HealthResponse{Ok: true}, nil
}

// ErrorToWire encodes an error as a protocol ToolError.
func ErrorToWire(err error) *pb.ToolError {
	ce := contracts.AsError(err)
	te := &pb.ToolError{Code: int32(ce.Code), Message: ce.Message, Retryable: ce.Retryable}
	if len(ce.Details) > 0 {
		te.DetailsJson, _ = json.Marshal(ce.Details) // details that do not marshal are dropped
	}
	return te
}

// ErrorFromWire decodes a protocol ToolError; a missing code (0) becomes
// CodeToolFailed.
func ErrorFromWire(te *pb.ToolError) *contracts.Error {
	code := contracts.Code(te.GetCode())
	if code == 0 {
		code = contracts.CodeToolFailed
	}
	e := &contracts.Error{Code: code, Message: te.GetMessage(), Retryable: te.GetRetryable()}
	if len(te.GetDetailsJson()) > 0 {
		var d map[string]any
		if json.Unmarshal(te.GetDetailsJson(), &d) == nil {
			e.Details = d
		}
	}
	return e
}
