// Package llm is the engine's view of a language model: one Complete call
// with messages and an optional JSON Schema for structured output.
//
// The engine owns this interface so that it never depends on a provider;
// agent/llm/openai adapts any OpenAI-compatible endpoint to it, and tests
// drive that real client against agent/llm/llmtest's scripted server.
package llm
