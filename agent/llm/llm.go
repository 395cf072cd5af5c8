package llm

import (
	"context"
	"encoding/json"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one completion. Schema, when set, is the JSON Schema the answer
// must satisfy; a provider either enforces it (structured output) or asks
// for it in the prompt. Name labels the schema (a-z, 0-9, _ and -).
type Request struct {
	Messages   []Message
	Schema     json.RawMessage
	SchemaName string
}

// Usage is the token count of one call, as the provider reported it.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// CachedTokens are the part of PromptTokens read from the provider's
	// prompt cache.
	CachedTokens int64 `json:"cached_tokens,omitempty"`
	// Model is the model the call asked for: the name prices are kept by.
	Model string `json:"model,omitempty"`
}

// MaxCallTokens bounds each token count of one call as it is recorded:
// about a trillion, far above any real call, and low enough that no sum of
// calls a run or a day can make overflows int64.
const MaxCallTokens = 1 << 40

// Bounded is u as Ordo counts it: the endpoint reports its own usage, so
// each count is clamped to 0..MaxCallTokens and CachedTokens to at most
// PromptTokens. A negative, wrapping or inconsistent report would
// otherwise make usage, cost and budgets go negative (a budget bypassed).
func (u Usage) Bounded() Usage {
	clamp := func(n int64) int64 { return min(max(n, 0), MaxCallTokens) }
	u.PromptTokens, u.CompletionTokens = clamp(u.PromptTokens), clamp(u.CompletionTokens)
	u.CachedTokens = min(clamp(u.CachedTokens), u.PromptTokens)
	return u
}

// Price is what a model's tokens cost, in USD per million tokens.
type Price struct {
	Input  float64 `json:"input" yaml:"input"`
	Output float64 `json:"output" yaml:"output"`
	// Cached prices the input tokens read from the prompt cache; nil
	// means the input price.
	Cached *float64 `json:"cached,omitempty" yaml:"cached"`
}

// Cost is what u cost at price p, in USD.
func (p Price) Cost(u Usage) float64 {
	cached := p.Input
	if p.Cached != nil {
		cached = *p.Cached
	}
	fresh := u.PromptTokens - u.CachedTokens
	return (float64(fresh)*p.Input + float64(u.CachedTokens)*cached + float64(u.CompletionTokens)*p.Output) / 1e6
}

// Response is the model's answer. A failed call's Usage holds what the
// provider reported, if anything.
type Response struct {
	Text  string
	Usage Usage
}

// LLM completes chat requests. Implementations return coded errors
// (contracts.CodeLLMFailed, CodeLLMTimeout, CodeLLMInvalidOutput).
type LLM interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

type observerKey struct{}

// WithObserver returns a context whose LLM calls made through Observed are
// reported to fn with the caller's role. The engine uses it to count the
// built-in LLM tools' calls under role "tool" in the run that made them.
func WithObserver(ctx context.Context, fn func(role string, u Usage)) context.Context {
	return context.WithValue(ctx, observerKey{}, fn)
}

// Observed wraps m so that every call, failed or not, is reported under role
// to the observer found in the call's context (if any).
func Observed(m LLM, role string) LLM { return observed{m, role} }

type observed struct {
	LLM
	role string
}

func (o observed) Complete(ctx context.Context, req Request) (Response, error) {
	resp, err := o.LLM.Complete(ctx, req)
	if fn, ok := ctx.Value(observerKey{}).(func(string, Usage)); ok {
		fn(o.role, resp.Usage)
	}
	return resp, err
}
