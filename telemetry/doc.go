// Package telemetry shows what Ordo does and what it costs: Prometheus
// metrics, OpenTelemetry traces and readiness.
//
// It owns the metric registry and every metric's definition (Metrics), the
// tracer provider set up from the standard OTEL_* variables (StartTracing),
// and the adapters that feed them, each wrapping one interface another
// package owns: an llm.LLM (calls, tokens, latency, a GenAI span), a
// memory.Checkpointer (checkpoint write latency, lease takeovers), a
// host.Middleware (a span per tool call, tool errors by code), an agent
// event consumer (runs, steps), mcp-go's tracing hooks (a span and a count
// per MCP request) and a collector that reads current state at scrape time
// (unfinished runs, interrupts waiting, plugins, upstreams). Nothing else
// in Ordo imports Prometheus; the engine, host and MCP server start spans
// through otel's global API, which costs next to nothing while tracing is
// off.
package telemetry
