// Package host is Ordo's side of tool execution: the live catalog of tools
// and where each comes from, the sources that supply them (plugin processes
// over go-plugin gRPC, in-process Go tools, upstream MCP servers through
// package mcpsource, all behind the small ToolProvider interface), the
// plugin manager that starts, checksums, health-checks, restarts, hot-adds
// and drains plugins, and the invocation chain (input validation, retries,
// timeouts, output validation) composed as net/http-style middleware in
// one place (New).
//
// The agent sees only Host's Lookup, List and Call; the recommender
// subscribes to catalog events; admin commands use AddPlugin, AddUpstream,
// RemoveSource and Sources.
package host
