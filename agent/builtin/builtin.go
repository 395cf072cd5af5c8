package builtin

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/agent/prompts"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Tool names.
const (
	Generate  = "llm.generate"
	Summarize = "llm.summarize"
)

// Tools returns llm.generate and llm.summarize over m, with the embedded
// prompts unless ps overrides them (nil keeps the defaults).
func Tools(m llm.LLM, ps prompts.Set) []sdk.Tool {
	if ps == nil {
		ps = prompts.Defaults()
	}
	m = llm.Observed(m, "tool")
	return []sdk.Tool{
		{Contract: contracts.Contract{
			Tool: Generate, Service: "llm", RiskLevel: contracts.RiskRead, Idempotent: true,
			Description: "Generate text (or JSON matching a given schema) from an instruction and inputs, with the language model.",
			InputSchema: json.RawMessage(`{"type":"object","required":["instruction"],"additionalProperties":false,"properties":{
				"instruction":{"type":"string","minLength":1},"inputs":{},"schema":{"type":"object"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","required":["text"],"properties":{"text":{"type":"string"},"data":{}}}`),
			ProducesMap:  map[string]string{"text": "$.text", "data": "$.data"},
		}, Handler: generate(m, ps[prompts.Generate])},
		{Contract: contracts.Contract{
			Tool: Summarize, Service: "llm", RiskLevel: contracts.RiskRead, Idempotent: true,
			Description: "Summarise text or records (rows, search results, notes) briefly with the language model.",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"anyOf":[{"required":["text"]},{"required":["records"]}],"properties":{
				"text":{"type":"string"},"records":{},"focus":{"type":"string"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","required":["summary"],"properties":{"summary":{"type":"string","minLength":1}}}`),
			ProducesMap:  map[string]string{"summary": "$.summary"},
		}, Handler: summarize(m, ps[prompts.Summarize])},
	}
}

func generate(m llm.LLM, system string) sdk.Handler {
	return func(ctx context.Context, call sdk.Call) (any, error) {
		user, _ := json.Marshal(map[string]any{"instruction": call.Payload["instruction"], "inputs": call.Payload["inputs"]})
		req := llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: string(user)}}}
		if s, ok := call.Payload["schema"]; ok {
			req.Schema, _ = json.Marshal(s)
			req.SchemaName = "generated"
		}
		resp, err := m.Complete(ctx, req)
		if err != nil {
			return nil, sdk.ToolError(true, "llm.generate: %v", err)
		}
		out := map[string]any{"text": resp.Text}
		if req.Schema != nil {
			raw, err := contracts.ExtractJSON(resp.Text)
			if err != nil {
				return nil, sdk.ToolError(true, "llm.generate: the model's answer holds no JSON: %v", err)
			}
			if out["data"], err = contracts.DecodeJSON(raw); err != nil {
				return nil, sdk.ToolError(true, "llm.generate: %v", err)
			}
		}
		return out, nil
	}
}

func summarize(m llm.LLM, system string) sdk.Handler {
	return func(ctx context.Context, call sdk.Call) (any, error) {
		user, _ := json.Marshal(call.Payload)
		resp, err := m.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: string(user)}}})
		if err != nil {
			return nil, sdk.ToolError(true, "llm.summarize: %v", err)
		}
		s := strings.TrimSpace(resp.Text)
		if s == "" {
			return nil, sdk.ToolError(true, "llm.summarize: the model returned nothing")
		}
		return map[string]any{"summary": s}, nil
	}
}
