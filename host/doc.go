// Package host is Ordo's side of tool execution: the live catalog of tools
// and where each comes from, the sources that supply them (plugin processes
// over go-plugin gRPC, in-process Go tools, upstream servers, all behind
// the small ToolProvider interface), the plugin manager that starts,
// checksums, health-checks, restarts, hot-adds and drains plugins, and the
// invocation chain (input validation, retries, timeouts, output
// validation) composed as net/http-style middleware in one place (New).
//
// An upstream server is an UpstreamSource the host is given an opener for
// (WithUpstreamOpener; package mcpsource's Open speaks MCP): the host keeps
// its catalog entries and state, never its protocol, and imports no MCP
// code.
//
// The agent sees only Host's Lookup, List and Call; the recommender
// subscribes to catalog events; admin commands use AddPlugin, AddUpstream,
// RemoveSource and Sources.
package host
