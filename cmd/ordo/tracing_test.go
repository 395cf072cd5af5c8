package main_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
)

// otlpReceiver is a local OTLP/HTTP trace receiver: it decodes what the
// exporter posts to /v1/traces and keeps the spans.
type otlpReceiver struct {
	URL   string
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var msg coltrace.ExportTraceServiceRequest
		if req.URL.Path != "/v1/traces" || proto.Unmarshal(body, &msg) != nil {
			http.Error(w, "want OTLP/HTTP protobuf at /v1/traces", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range msg.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// waitUntil returns the spans received, by name, once done says they are
// all there (the exporter sends them in batches), or fails the test,
// saying what was awaited, when it waited too long.
func (r *otlpReceiver) waitUntil(t *testing.T, what string, done func(map[string][]*tracepb.Span) bool) map[string][]*tracepb.Span {
	t.Helper()
	var by map[string][]*tracepb.Span
	testwait.For(t, 2*time.Minute, func() error {
		r.mu.Lock()
		by = map[string][]*tracepb.Span{}
		for _, s := range r.spans {
			by[s.Name] = append(by[s.Name], s)
		}
		r.mu.Unlock()
		if done(by) {
			return nil
		}
		return fmt.Errorf("waiting for %s; received spans %v", what, slices.Collect(maps.Keys(by)))
	})
	return by
}

// waitFor waits until a span of every name has arrived.
func (r *otlpReceiver) waitFor(t *testing.T, names ...string) map[string][]*tracepb.Span {
	t.Helper()
	return r.waitUntil(t, "spans "+strings.Join(names, ", "), func(by map[string][]*tracepb.Span) bool {
		for _, n := range names {
			if len(by[n]) == 0 {
				return false
			}
		}
		return true
	})
}

// attr is a span attribute's value as a string ("" when absent).
func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			if _, ok := kv.Value.Value.(*commonpb.AnyValue_IntValue); ok {
				return strconv.FormatInt(kv.Value.GetIntValue(), 10)
			}
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// TestTracesOfARun: with OTEL_EXPORTER_OTLP_ENDPOINT set, `ordo serve
// --http` sends one trace per request to a local OTLP receiver: the MCP
// server span (whose parent is the traceparent the client put in _meta),
// the run, its planning with a GenAI model span, each step, each tool call
// and the gRPC call into the plugin under it. A tool call that fails is a
// failed span, and so is the MCP request whose result is isError.
func TestTracesOfARun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	otlp := newOTLPReceiver(t)
	const token = "tracing-test-token-0123456789"
	mcpURL, _ := serveGreeter(t, ctx, token, "",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+otlp.URL, "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=ordo-test")

	c, err := httpSession(ctx, mcpURL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	call := func(args map[string]any) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "execute", args
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + traceID + "-" + parentID + "-01"}}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call(map[string]any{"goal": "greet the world", "options": map[string]any{"auto_approve": true}}); res.IsError {
		t.Fatalf("planned run: %s", testmcp.Text(res))
	}
	spans := otlp.waitFor(t, "tools/call execute", "ordo.run", "ordo.plan", "chat test-model", "ordo.step",
		"execute_tool text.template", "ordo.plugin.v1.ToolPlugin/Call")

	byID := map[string]*tracepb.Span{}
	for _, ss := range spans {
		for _, s := range ss {
			byID[hex.EncodeToString(s.SpanId)] = s
		}
	}
	parentOf := func(s *tracepb.Span) *tracepb.Span { return byID[hex.EncodeToString(s.ParentSpanId)] }
	server := spans["tools/call execute"][0]
	if hex.EncodeToString(server.TraceId) != traceID || hex.EncodeToString(server.ParentSpanId) != parentID ||
		server.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("MCP span: trace %x parent %x kind %v; want the client's trace and span from _meta",
			server.TraceId, server.ParentSpanId, server.Kind)
	}
	if attr(server, "mcp.method.name") != "tools/call" || attr(server, "gen_ai.tool.name") != "execute" {
		t.Errorf("MCP span attributes: %v", server.Attributes)
	}
	// Each span's parent, up to the MCP request: one trace per run.
	for child, parent := range map[string]string{
		"ordo.run": "tools/call execute", "ordo.plan": "ordo.run", "chat test-model": "ordo.plan",
		"ordo.step": "ordo.run", "execute_tool text.template": "ordo.step",
		"ordo.plugin.v1.ToolPlugin/Call": "execute_tool text.template",
	} {
		s := spans[child][0]
		if p := parentOf(s); p == nil || p.Name != parent || hex.EncodeToString(s.TraceId) != traceID {
			t.Errorf("span %s: parent %v, trace %x; want parent %s in trace %s", child, p, s.TraceId, parent, traceID)
		}
	}
	chat := spans["chat test-model"][0]
	for key, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "test-model",
		"gen_ai.usage.input_tokens": "120", "gen_ai.usage.output_tokens": "40"} {
		if got := attr(chat, key); got != want {
			t.Errorf("model span %s = %q, want %q", key, got, want)
		}
	}
	tool := spans["execute_tool text.template"][0]
	if attr(tool, "gen_ai.operation.name") != "execute_tool" || attr(tool, "gen_ai.tool.name") != "text.template" ||
		tool.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("tool span: %v %v", tool.Attributes, tool.Status)
	}
	if run := spans["ordo.run"][0]; !strings.HasPrefix(attr(run, "ordo.run.id"), "run_") || attr(run, "ordo.run.status") != "completed" {
		t.Errorf("run span: %v", run.Attributes)
	}

	// A tool that fails: its span and the MCP request's (isError) fail.
	var failing map[string]any
	_ = json.Unmarshal([]byte(`{"version":"1.0","goal":"read nothing","timezone":"UTC","actions":[
		{"id":"read","tool":"sheets.query","intent":"read","requires":[],"produces":["records"],"inputs":{"file":"no-such-file.csv"}}]}`), &failing)
	if res := call(map[string]any{"plan": failing, "options": map[string]any{"auto_approve": true}}); !res.IsError {
		t.Fatalf("a run reading a missing file: %s", testmcp.Text(res))
	}
	spans = otlp.waitFor(t, "execute_tool sheets.query")
	if s := spans["execute_tool sheets.query"][0]; s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || attr(s, "error.type") == "" {
		t.Errorf("failed tool span: %v %v", s.Status, s.Attributes)
	}
	// The MCP span ends after the tool's, maybe in a later batch.
	otlp.waitUntil(t, "a failed MCP span", func(by map[string][]*tracepb.Span) bool {
		for _, s := range by["tools/call execute"] {
			if s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
				return true
			}
		}
		return false
	})
}
