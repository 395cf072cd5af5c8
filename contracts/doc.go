// Package contracts is Ordo's domain: tool contracts, the Action Plan and
// its checks, the run record, and the coded errors every layer reports.
//
// It is pure Go with no I/O so that every other package (plugins, host,
// agent, memory, mcpserver) can share one vocabulary without depending on
// each other. Schemas are compiled with santhosh-tekuri/jsonschema (draft
// 2020-12, formats asserted) and produces_map paths with RFC 9535 JSONPath.
package contracts
