// Package jsonbound keeps JSON nested deeper than contracts.MaxJSONDepth
// out of the MCP streams Ordo reads, before any decoder builds values from
// it: newline-delimited messages (stdio, both as a server and from upstream
// processes) and server-sent events (responses of HTTP upstreams).
// mcp-go decodes a message as soon as it has read it and offers no hook
// before that, so the bound wraps the reader it is given.
package jsonbound
