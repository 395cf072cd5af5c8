// Package mcpsource turns an upstream MCP server (a stdio command or a
// streamable-HTTP URL) into a tool source for the host: it speaks MCP
// through mcp-go's client, makes contracts from the upstream's tools
// (SOURCE.tool names, risk from annotations, permissive output schemas with
// a produces_map), turns results and isError answers into Ordo values and
// coded errors, and keeps the connection alive (restarting a stdio process
// with backoff, reconnecting an HTTP server that went away, following
// tools/list_changed and re-listing periodically by hash).
//
// It knows nothing of the catalog: Source implements the host's
// ToolProvider and signals Changed when its tools or health moved, and the
// host (AddUpstream) re-reads it. Keeping MCP out of host keeps the host's
// only job the catalog and invocation chain.
package mcpsource
