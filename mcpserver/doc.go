// Package mcpserver is Ordo's face to MCP clients: the plan, execute and
// approve tools, run status and listing, tool search, the admin tools for
// plugins and upstream MCP servers, resources for runs, their plan graphs,
// the catalog and the Action Plan schema (with update notifications for
// subscribed runs), prompts for writing a plan and reviewing a run, and
// argument completion, over stdio and streamable HTTP (mark3labs/mcp-go).
//
// It owns only translation: MCP requests become engine calls and runs
// become structured tool results. Everything it needs from the engine, the
// run store, the host and the recommender is a small interface declared
// here (deps.go), so the package compiles and is tested against the real
// implementations without depending on their internals.
//
// Human approval and sampling use MCP's multi round-trip requests, which
// mcp-go bridges to the older server-initiated elicitation and sampling
// requests for clients that predate protocol 2026-07-28, so one handler
// serves both eras. HTTP access needs a bearer token mapped to a user and
// roles; admin tools need the admin role.
package mcpserver
