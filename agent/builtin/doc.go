// Package builtin provides the LLM work a plan can need as ordinary
// catalog tools: llm.generate and llm.summarize (risk read). The caller
// registers them with the host (host.InProcess("llm", builtin.Tools(m)...)).
// Their model calls are tool calls: reported under role "tool" to the
// engine's per-call observer, apart from the orchestration roles.
package builtin
