package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
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

// Config says where the model lives and how to talk to it.
type Config struct {
	BaseURL string // e.g. http://127.0.0.1:11434/v1; empty means OpenAI
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

// ConfigFromEnv reads ORDO_LLM_BASE_URL (or OPENAI_BASE_URL),
// ORDO_LLM_API_KEY (or OPENAI_API_KEY), ORDO_LLM_MODEL, ORDO_LLM_TIMEOUT
// (a Go duration), ORDO_LLM_MAX_RETRIES and ORDO_LLM_STRUCTURED (true|false).
func ConfigFromEnv() (Config, error) {
	c := Config{
		BaseURL: firstEnv("ORDO_LLM_BASE_URL", "OPENAI_BASE_URL"),
		APIKey:  firstEnv("ORDO_LLM_API_KEY", "OPENAI_API_KEY"),
		Model:   os.Getenv("ORDO_LLM_MODEL"),
	}
	if v := os.Getenv("ORDO_LLM_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return c, contracts.Errorf(contracts.CodeInvalidConfig, "ORDO_LLM_TIMEOUT: %w", err).With("field", "ORDO_LLM_TIMEOUT")
		}
		c.Timeout = d
	}
	if v := os.Getenv("ORDO_LLM_MAX_RETRIES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return c, contracts.Errorf(contracts.CodeInvalidConfig, "ORDO_LLM_MAX_RETRIES: want a count, got %q", v).With("field", "ORDO_LLM_MAX_RETRIES")
		}
		c.MaxRetries = &n
	}
	if v := os.Getenv("ORDO_LLM_STRUCTURED"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, contracts.Errorf(contracts.CodeInvalidConfig, "ORDO_LLM_STRUCTURED: %w", err).With("field", "ORDO_LLM_STRUCTURED")
		}
		c.StructuredOutput = b
	}
	return c, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
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
	opts := []option.RequestOption{option.WithMaxRetries(retries), option.WithMiddleware(boundAnswer)}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
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
	if refused != nil {
		return llm.Response{}, contracts.Errorf(contracts.CodeLLMInvalidOutput, "llm: the answer: %w", refused)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return llm.Response{}, contracts.Errorf(contracts.CodeLLMTimeout, "llm: no answer within %s: %w", c.cfg.Timeout, err)
		}
		return llm.Response{}, contracts.Errorf(contracts.CodeLLMFailed, "llm: %w", err)
	}
	if len(resp.Choices) == 0 {
		return llm.Response{}, contracts.Errorf(contracts.CodeLLMInvalidOutput, "llm: the answer has no choices")
	}
	return llm.Response{
		Text:  resp.Choices[0].Message.Content,
		Usage: llm.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens},
	}, nil
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
