// Package contracts is Ordo's domain: tool contracts, the Action Plan and
// its checks, the run record, and the coded errors every layer reports.
//
// It is pure Go with no I/O so that every other package (plugins, host,
// agent, memory, mcpserver) can share one vocabulary without depending on
// each other. What it owns:
//
//   - Tool (NewTool): a contract checked and compiled once — JSON Schemas
//     with santhosh-tekuri/jsonschema (draft 2020-12, formats asserted, no
//     loader so no hidden I/O) and produces_map paths as RFC 9535 JSONPath
//     (theory/jsonpath) — then ValidateInput/ValidateOutput/Produce per call.
//   - The Action Plan: the embedded schema (PlanSchema), ParsePlan for LLM
//     text (ExtractJSON, dependency-reference coercion, schema, decode) and
//     CheckPlan for the semantic checks, giving a Graph with topological
//     levels and a Mermaid rendering.
//   - LLM-output tolerance that never guesses (ExtractJSON, DecodeJSON) and
//     the marker of a missing value no JSON can hold (Missing, TakeMissing).
//   - The success-criteria language (ParseCriterion), redaction of secret
//     payload fields (Redact), and the coded Error taxonomy.
package contracts
