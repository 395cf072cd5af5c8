package grpctrace

import (
	"context"
	"net"
	"os"
	"os/exec"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/ordo-run/ordo/plugins/proto"
)

type echo struct {
	pb.UnimplementedToolPluginServer
	seen chan trace.SpanContext // the handler's span context, per call
}

func (e *echo) Call(ctx context.Context, req *pb.CallRequest) (*pb.CallResponse, error) {
	e.seen <- trace.SpanContextFromContext(ctx)
	return &pb.CallResponse{Outcome: &pb.CallResponse_ResultJson{ResultJson: req.PayloadJson}}, nil
}

// TestOnlyTracedCallsAreTraced runs real gRPC calls through both gates,
// each side with its own recording tracer provider, as host and plugin
// are two processes: a call outside a trace makes no span on either
// side; a call inside one makes a client span whose trace the plugin's
// server span continues.
func TestOnlyTracedCallsAreTraced(t *testing.T) {
	hostSpans, pluginSpans := tracetest.NewSpanRecorder(), tracetest.NewSpanRecorder()
	hostTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(hostSpans))
	pluginTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(pluginSpans))
	prop := otelgrpc.WithPropagators(propagation.TraceContext{})

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.StatsHandler(Server(prop, otelgrpc.WithTracerProvider(pluginTP))))
	e := &echo{seen: make(chan trace.SpanContext, 1)}
	pb.RegisterToolPluginServer(srv, e)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(Client(prop, otelgrpc.WithTracerProvider(hostTP))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	client := pb.NewToolPluginClient(conn)
	call := func(ctx context.Context) trace.SpanContext {
		t.Helper()
		if _, err := client.Call(ctx, &pb.CallRequest{Tool: "t.echo", PayloadJson: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		return <-e.seen
	}

	if sc := call(context.Background()); sc.IsValid() {
		t.Errorf("untraced call: the plugin's handler has span context %v", sc)
	}
	if n, m := len(hostSpans.Ended()), len(pluginSpans.Ended()); n != 0 || m != 0 {
		t.Fatalf("untraced call: %d host spans, %d plugin spans; want none", n, m)
	}

	ctx, parent := hostTP.Tracer("test").Start(context.Background(), "execute_tool t.echo")
	got := call(ctx)
	parent.End()
	var clientSpan, serverSpan sdktrace.ReadOnlySpan
	for _, s := range hostSpans.Ended() {
		if s.SpanKind() == trace.SpanKindClient {
			clientSpan = s
		}
	}
	for _, s := range pluginSpans.Ended() {
		if s.SpanKind() == trace.SpanKindServer {
			serverSpan = s
		}
	}
	if clientSpan == nil || serverSpan == nil {
		t.Fatalf("traced call: host spans %d, plugin spans %d; want a client and a server span",
			len(hostSpans.Ended()), len(pluginSpans.Ended()))
	}
	tid := parent.SpanContext().TraceID()
	if clientSpan.Parent().SpanID() != parent.SpanContext().SpanID() || clientSpan.SpanContext().TraceID() != tid {
		t.Errorf("client span %s: parent %v; want the caller's span", clientSpan.Name(), clientSpan.Parent())
	}
	if serverSpan.Parent().SpanID() != clientSpan.SpanContext().SpanID() || serverSpan.SpanContext().TraceID() != tid {
		t.Errorf("server span %s: parent %v; want the client span %v", serverSpan.Name(), serverSpan.Parent(), clientSpan.SpanContext())
	}
	if got.TraceID() != tid {
		t.Errorf("the plugin's handler runs in trace %v, want %v", got.TraceID(), tid)
	}
}

// TestConfigured: a process has tracing configured once it sets a global
// tracer provider (or propagator), as telemetry.StartTracing does; before,
// host and SDK leave otelgrpc out of their connections. It runs in a fresh
// process of its own, as the global provider cannot be unset.
func TestConfigured(t *testing.T) {
	if os.Getenv("GRPCTRACE_FRESH") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConfigured$", "-test.count=1")
		cmd.Env = append(os.Environ(), "GRPCTRACE_FRESH=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
	if Configured() {
		t.Fatal("Configured before any global tracer provider or propagator was set")
	}
	otel.SetTracerProvider(sdktrace.NewTracerProvider())
	if !Configured() {
		t.Fatal("not Configured after otel.SetTracerProvider")
	}
}
