// Package testmcp is the small real MCP server (mcp-go) that tests of
// upstream MCP servers talk to: the host's mcpsource, the agent and the MCP
// gateway each run it, so they agree on one tool contract; and what tests
// ask of an MCP client, one way everywhere. Only tests import it.
package testmcp
