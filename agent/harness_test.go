package agent

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/builtin"
	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/agent/llm/openai"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// testTools is an in-process catalog: real contracts and Go handlers,
// with the host's validation on both sides. It records every call.
type testTools struct {
	cat      map[string]*contracts.Tool
	handlers map[string]sdk.Handler
	mu       sync.Mutex
	calls    []toolCall
}

type toolCall struct {
	Tool, Key string
	Payload   map[string]any
}

func newTools(t testing.TB, tools ...sdk.Tool) *testTools {
	tt := &testTools{cat: map[string]*contracts.Tool{}, handlers: map[string]sdk.Handler{}}
	for _, st := range tools {
		ct, err := contracts.NewTool(st.Contract)
		if err != nil {
			t.Fatal(err)
		}
		tt.cat[ct.Name()] = ct
		tt.handlers[ct.Name()] = st.Handler
	}
	return tt
}

func (tt *testTools) Lookup(name string) (*contracts.Tool, bool) {
	t, ok := tt.cat[name]
	return t, ok
}
func (tt *testTools) List() []*contracts.Tool {
	var out []*contracts.Tool
	for _, t := range tt.cat {
		out = append(out, t)
	}
	return out
}

func (tt *testTools) Call(ctx context.Context, name string, payload json.RawMessage, key string, _ ...host.CallOption) (json.RawMessage, error) {
	t, ok := tt.cat[name]
	if !ok {
		return nil, contracts.Errorf(contracts.CodeUnknownTool, "no tool %s", name)
	}
	v, err := contracts.DecodeJSON(payload)
	if err != nil {
		return nil, err
	}
	if err := t.ValidateInput(v); err != nil {
		return nil, err
	}
	p, _ := v.(map[string]any)
	tt.mu.Lock()
	tt.calls = append(tt.calls, toolCall{name, key, p})
	tt.mu.Unlock()
	res, err := tt.handlers[name](ctx, sdk.Call{Tool: name, Payload: p, IdempotencyKey: key})
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	if err := t.ValidateOutput(json.RawMessage(out)); err != nil {
		return nil, err
	}
	return out, nil
}

func (tt *testTools) Calls(tool string) []toolCall {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	var out []toolCall
	for _, c := range tt.calls {
		if tool == "" || c.Tool == tool {
			out = append(out, c)
		}
	}
	return out
}

// tool builds an sdk.Tool from a compact description.
func tool(name string, risk contracts.Risk, in, out string, produces map[string]string, h sdk.Handler, tags ...string) sdk.Tool {
	return sdk.Tool{Contract: contracts.Contract{
		Tool: name, Service: name[:indexDot(name)], Description: name + " tool", RiskLevel: risk, Tags: tags,
		InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out), ProducesMap: produces,
	}, Handler: h}
}

func indexDot(s string) int {
	for i, r := range s {
		if r == '.' {
			return i
		}
	}
	return len(s)
}

func returns(v any) sdk.Handler {
	return func(context.Context, sdk.Call) (any, error) { return v, nil }
}

// The seed tools: weather, web search, notes, chat, sheets.
func weatherTool(h sdk.Handler) sdk.Tool {
	return tool("weather.get", contracts.RiskRead, `{"type":"object","required":["city"],"properties":{"city":{"type":"string"}}}`,
		`{"type":"object","required":["forecast"],"properties":{"forecast":{"type":"string"}}}`, map[string]string{"forecast": "$.forecast"}, h)
}

func searchTool() sdk.Tool {
	return tool("web.search", contracts.RiskRead, `{"type":"object","required":["query"],"properties":{"query":{"type":"string"}}}`,
		`{"type":"object","required":["results"],"properties":{"results":{"type":"string"}}}`, map[string]string{"results": "$.results"},
		func(_ context.Context, c sdk.Call) (any, error) {
			return map[string]any{"results": "found: " + c.Payload["query"].(string)}, nil
		})
}

func notesTool() sdk.Tool {
	return tool("notes.create_page", contracts.RiskWrite,
		`{"type":"object","required":["title"],"properties":{"title":{"type":"string"},"content":{"type":"string"}}}`,
		`{"type":"object","required":["id","url"],"properties":{"id":{"type":"string"},"url":{"type":"string"}}}`,
		map[string]string{"page_id": "$.id", "page_url": "$.url"},
		returns(map[string]any{"id": "page_123", "url": "https://notes.local/page_123"}))
}

func chatTool() sdk.Tool {
	return tool("chat.post_message", contracts.RiskWrite,
		`{"type":"object","required":["channel","text"],"properties":{"channel":{"type":"string"},"text":{"type":"string"}}}`,
		`{"type":"object","required":["ts"],"properties":{"ts":{"type":"string"}}}`,
		map[string]string{"message_ts": "$.ts"}, returns(map[string]any{"ts": "1700000000.0001"}), contracts.TagExternalSend)
}

func sheetsTool() sdk.Tool {
	return tool("sheets.get_range", contracts.RiskRead,
		`{"type":"object","required":["range"],"properties":{"range":{"type":"string"}}}`,
		`{"type":"object","required":["values"],"properties":{"values":{"type":"array"},"summary":{"type":"string"}}}`,
		map[string]string{"records": "$.values", "summary": "$.summary"},
		returns(map[string]any{"values": []any{[]any{"mon", 120}, []any{"tue", 80}}}))
}

// scripted returns a real openai-go client talking to a scripted server.
func scripted(t testing.TB, replies ...llmtest.Reply) (llm.LLM, *llmtest.Server) {
	srv := llmtest.New(t, replies...)
	c, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "test", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, srv
}

func planner(content string) llmtest.Reply { return llmtest.Reply{Role: "planner", Content: content} }
func replanner(content string) llmtest.Reply {
	return llmtest.Reply{Role: "replanner", Content: content}
}
func composer(content string) llmtest.Reply { return llmtest.Reply{Role: "composer", Content: content} }

// builtins adapts the built-in LLM tools for testTools.
func builtins(m llm.LLM) []sdk.Tool { return builtin.Tools(m, nil) }

func mustPlan(t testing.TB, js string) *contracts.Plan {
	t.Helper()
	p, err := contracts.ParsePlan([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newStore() *memory.MemStore { return memory.NewMemStore() }

func stateOf(t testing.TB, run *contracts.Run, key string) any {
	t.Helper()
	raw, ok := run.State[key]
	if !ok {
		return nil
	}
	v, err := contracts.DecodeJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantStatus(t testing.TB, run *contracts.Run, err error, want contracts.RunStatus) {
	t.Helper()
	if err != nil {
		t.Fatalf("err = %v", err)
	}
	if run.Status != want {
		t.Fatalf("status = %s, want %s (error %+v, interrupt %+v)", run.Status, want, run.Error, run.Interrupt)
	}
}
