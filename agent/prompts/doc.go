// Package prompts holds the system prompts of the engine's LLM roles
// (planner, replanner, filler, verifier, composer) and of the built-in LLM
// tools, as files: embedded defaults, each overridable by a file of the same
// name in a prompts directory, so operators tune wording without a rebuild.
//
// Every prompt starts with a "role: NAME" line; the scripted test server
// (agent/llm/llmtest) routes replies by it.
package prompts
