package mcpserver

import (
	"context"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/contracts"
)

// samplingMaxTokens bounds each sampled answer; a plan fits well within it.
const samplingMaxTokens = 8192

// ask is one model request waiting for the client's answer. shown is
// closed when a request hands it to the client: only then does its
// timeout start, so a request queued behind another (parallel steps each
// needing the filler) waits its turn.
type ask struct {
	params mcp.CreateMessageParams
	reply  chan *mcp.CreateMessageResult
	shown  chan struct{}
}

// samplingModel is an llm.LLM answered by the calling client through MCP
// sampling. Each Complete hands the request to the job's waiter, which
// returns it to the client as an input request, and blocks until the
// client's retry brings the answer (or the job's timeout passes). Once the
// client has let one request time out it is taken to have gone: the job's
// other requests, queued or still to come, fail at once instead of each
// waiting for a client that will not answer, so the run reaches its stop
// (failed, or a step's failure) and lets go of its lease.
type samplingModel struct{ j *job }

var _ llm.LLM = (*samplingModel)(nil)

func (m *samplingModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	j := m.j
	a := &ask{params: samplingParams(req), reply: make(chan *mcp.CreateMessageResult, 1), shown: make(chan struct{})}
	gone := func() (llm.Response, error) {
		return llm.Response{}, contracts.Errorf(contracts.CodeLLMTimeout, "the client did not answer a sampling request within %s", j.timeout)
	}
	cancelled := func() (llm.Response, error) {
		return llm.Response{}, contracts.Errorf(contracts.CodeCancelled, "sampling: %w", ctx.Err())
	}
	select {
	case j.out <- outcome{ask: a}:
	case <-j.gone:
		return gone()
	case <-ctx.Done():
		return cancelled()
	}
	select {
	case <-a.shown:
	case <-j.gone:
		return gone()
	case <-ctx.Done():
		return cancelled()
	}
	timer := time.NewTimer(j.timeout)
	defer timer.Stop()
	select {
	case res := <-a.reply:
		text := samplingText(res)
		if text == "" {
			return llm.Response{}, contracts.Errorf(contracts.CodeLLMInvalidOutput, "the client's sampling answer has no text")
		}
		// Sampling reports no tokens; the run still records the call and
		// the model the client chose.
		return llm.Response{Text: text, Usage: llm.Usage{Model: res.Model}}, nil
	case <-timer.C:
		j.goneOnce.Do(func() { close(j.gone) })
		return gone()
	case <-j.gone:
		return gone()
	case <-ctx.Done():
		return cancelled()
	}
}

// samplingParams turns an engine model request into MCP sampling: system
// messages become the system prompt, and a required JSON Schema is stated
// in it, since sampling has no structured-output switch.
func samplingParams(req llm.Request) mcp.CreateMessageParams {
	var system []string
	p := mcp.CreateMessageParams{MaxTokens: samplingMaxTokens, IncludeContext: "none"}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			system = append(system, m.Content)
		case llm.RoleAssistant:
			p.Messages = append(p.Messages, mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent(m.Content)})
		default:
			p.Messages = append(p.Messages, mcp.SamplingMessage{Role: mcp.RoleUser, Content: mcp.NewTextContent(m.Content)})
		}
	}
	if len(req.Schema) > 0 {
		system = append(system, "Answer with one JSON object, and nothing else, that satisfies this JSON Schema:\n"+string(req.Schema))
	}
	p.SystemPrompt = strings.Join(system, "\n\n")
	p.Metadata = map[string]any{"ordo_role": req.SchemaName}
	return p
}

// samplingText extracts the text of a sampling answer.
func samplingText(res *mcp.CreateMessageResult) string {
	if res == nil {
		return ""
	}
	switch c := res.Content.(type) {
	case mcp.TextContent:
		return c.Text
	case *mcp.TextContent:
		return c.Text
	case map[string]any:
		t, _ := c["text"].(string)
		return t
	case []any:
		var parts []string
		for _, item := range c {
			if m, ok := item.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					parts = append(parts, t)
				}
			}
		}
		return strings.Join(parts, "")
	}
	return ""
}
