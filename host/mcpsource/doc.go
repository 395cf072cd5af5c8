// Package mcpsource turns an upstream MCP server (a stdio command or a
// streamable-HTTP URL) into a host.UpstreamSource: it speaks MCP through
// mcp-go's client, makes contracts from the upstream's tools (SOURCE.tool
// names, risk from annotations, permissive output schemas with a
// produces_map), turns results and isError answers into Ordo values and
// coded errors, and keeps the connection alive (restarting a stdio process
// with backoff, reconnecting an HTTP server that went away, following
// tools/list_changed and re-listing periodically by hash).
//
// It knows nothing of the catalog, and the host knows nothing of MCP: the
// host owns the interface (UpstreamSource) and the declaration it reads
// (UpstreamSpec), and whoever builds the host hands it Open with
// host.WithUpstreamOpener; on a signal from Changed the host re-reads the
// source. The package lives under host/ because it exists only to be a
// host source and imports host for what it implements, while host never
// imports it (as net/http/httptest sits under net/http): a sibling package
// would change no dependency, only where a reader looks for it.
package mcpsource
