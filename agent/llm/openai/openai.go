package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/contracts"
)

// DefaultMaxRetries is Config.MaxRetries when it is nil.
const DefaultMaxRetries = 2

// DefaultBaseURL is OpenAI's endpoint, used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Config says where the model lives and how to talk to it.
type Config struct {
	BaseURL string // e.g. http://127.0.0.1:11434/v1; empty means DefaultBaseURL
	APIKey  string
	Model   string
	// Timeout bounds a whole Complete call, retries included (default 60s).
	Timeout time.Duration
	// MaxRetries of transient HTTP failures (429, 5xx): nil means the
	// default 2, and 0 means none (a pointer, so "unset" and 0 differ).
	MaxRetries *int
	// StructuredOutput sends response_format json_schema; endpoints that do
	// not support it get the schema in the system prompt instead.
	StructuredOutput bool
	// HTTPClient replaces the default client (tests, proxies).
	HTTPClient *http.Client
}

// Client is an llm.LLM over openai-go.
type Client struct {
	cfg    Config
	client oai.Client
}

// New checks cfg and builds a client. A model name is required.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "llm: model is required").With("field", "model")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	retries := DefaultMaxRetries
	if cfg.MaxRetries != nil {
		retries = *cfg.MaxRetries
	}
	if retries < 0 {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "llm: max_retries must be >= 0, got %d", retries).With("field", "max_retries")
	}
	cfg.MaxRetries = &retries
	// Always our base URL (and key, below): openai-go would otherwise read
	// OPENAI_BASE_URL, so a variable set for another tool would move Ordo.
	baseURL := cfg.BaseURL
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	opts := []option.RequestOption{option.WithMaxRetries(retries), option.WithMiddleware(boundAnswer), option.WithBaseURL(baseURL)}
	// An empty key is fine for local endpoints; a placeholder stops the
	// client from refusing to send.
	key := cfg.APIKey
	if key == "" {
		key = "none"
	}
	opts = append(opts, option.WithAPIKey(key))
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Client{cfg: cfg, client: oai.NewClient(opts...)}, nil
}

// Complete sends one chat completion, bounded as a whole by cfg.Timeout
// (openai-go does not retry a per-request timeout, so the bound is ours).
func (c *Client) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	params := oai.ChatCompletionNewParams{Model: shared.ChatModel(c.cfg.Model)}
	msgs := req.Messages
	if len(req.Schema) > 0 {
		if c.cfg.StructuredOutput {
			name := req.SchemaName
			if name == "" {
				name = "answer"
			}
			params.ResponseFormat = oai.ChatCompletionNewParamsResponseFormatUnion{
				OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
					JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: req.Schema},
				},
			}
		} else {
			msgs = withSchemaPrompt(msgs, req.Schema)
		}
	}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleSystem:
			params.Messages = append(params.Messages, oai.SystemMessage(m.Content))
		case llm.RoleAssistant:
			params.Messages = append(params.Messages, oai.AssistantMessage(m.Content))
		default:
			params.Messages = append(params.Messages, oai.UserMessage(m.Content))
		}
	}
	var refused error
	resp, err := c.client.Chat.Completions.New(context.WithValue(ctx, refusalKey{}, &refused), params)
	used := llm.Usage{Model: c.cfg.Model}
	if resp != nil {
		used.PromptTokens, used.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
		used.CachedTokens = resp.Usage.PromptTokensDetails.CachedTokens
	}
	if refused != nil {
		return llm.Response{Usage: used}, contracts.Errorf(contracts.CodeLLMInvalidOutput, "llm: the answer: %w", refused)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return llm.Response{Usage: used}, contracts.Errorf(contracts.CodeLLMTimeout, "llm: no answer within %s: %w", c.cfg.Timeout, err)
		}
		return llm.Response{Usage: used}, contracts.Errorf(contracts.CodeLLMFailed, "llm: %w", err)
	}
	// A body of JSON null decodes to no completion and no error.
	if resp == nil || len(resp.Choices) == 0 {
		return llm.Response{Usage: used}, contracts.Errorf(contracts.CodeLLMInvalidOutput, "llm: the answer has no choices")
	}
	return llm.Response{Text: resp.Choices[0].Message.Content, Usage: used}, nil
}

// withSchemaPrompt asks for the schema in words, for endpoints without
// structured output: appended to the first system message, or added as one.
func withSchemaPrompt(msgs []llm.Message, schema []byte) []llm.Message {
	note := fmt.Sprintf("\n\nAnswer with one JSON object only, no prose, that satisfies this JSON Schema:\n%s", schema)
	out := append([]llm.Message(nil), msgs...)
	for i := range out {
		if out[i].Role == llm.RoleSystem {
			out[i].Content += note
			return out
		}
	}
	return append([]llm.Message{{Role: llm.RoleSystem, Content: strings.TrimSpace(note)}}, out...)
}
