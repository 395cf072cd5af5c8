// Package openai embeds text through any OpenAI-compatible /v1/embeddings
// endpoint (OpenAI, Azure OpenAI, Ollama, vLLM, LocalAI) using openai-go.
//
// It lives apart from package embed so only programs that configure a
// network provider compile and link the OpenAI client.
package openai
