// Package openai adapts any OpenAI-compatible chat-completions endpoint
// (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server) to llm.LLM with
// github.com/openai/openai-go/v3. It is the only package that imports it.
package openai
