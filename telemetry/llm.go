package telemetry

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/contracts"
)

// LLM wraps m so that every call is counted (calls, tokens, latency) under
// its role — the request's SchemaName, which the engine sets to the role
// (planner, composer, filler, critic) — and the model name from
// configuration, inside a GenAI client span ("chat MODEL").
func (m *Metrics) LLM(inner llm.LLM, model string) llm.LLM {
	return observedLLM{inner: inner, m: m, model: model}
}

type observedLLM struct {
	inner llm.LLM
	m     *Metrics
	model string
}

func (o observedLLM) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	role := req.SchemaName
	if role == "" {
		role = "unnamed"
	}
	role = o.m.roles.value(role)
	ctx, span := tracer.Start(ctx, "chat "+o.model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		semconv.GenAIOperationNameChat, semconv.GenAIRequestModelKey.String(o.model), attribute.String("ordo.llm.role", role)))
	defer span.End()
	start := time.Now()
	resp, err := o.inner.Complete(ctx, req)
	o.m.llmSeconds.WithLabelValues(role, o.model).Observe(time.Since(start).Seconds())
	o.m.llmCalls.WithLabelValues(role, o.model, outcome(err)).Inc()
	// Counted as the run's usage counts it: a negative report would
	// panic the counter, a huge one inflate it past every run's usage.
	u := resp.Usage.Bounded()
	o.m.llmTokens.WithLabelValues(role, o.model, "input").Add(float64(u.PromptTokens))
	o.m.llmTokens.WithLabelValues(role, o.model, "output").Add(float64(u.CompletionTokens))
	span.SetAttributes(semconv.GenAIUsageInputTokensKey.Int64(u.PromptTokens),
		semconv.GenAIUsageOutputTokensKey.Int64(u.CompletionTokens))
	failSpan(span, err)
	return resp, err
}

// failSpan marks span failed with err's Ordo code as error.type.
func failSpan(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.SetAttributes(semconv.ErrorTypeKey.String(codeLabel(err)))
	span.SetStatus(codes.Error, err.Error())
}

// codeLabel is err's Ordo error code, as a label value.
func codeLabel(err error) string {
	return strconv.Itoa(int(contracts.AsError(err).Code))
}
