// Package llmtest is a scripted OpenAI chat-completions server for tests:
// the real openai-go client talks HTTP to it and gets queued answers.
//
// It lives outside _test files because the engine, MCP server and CLI
// tests all drive real clients against it. Replies can be bound to a role,
// detected from the "role: NAME" first line of Ordo's system prompts.
package llmtest
