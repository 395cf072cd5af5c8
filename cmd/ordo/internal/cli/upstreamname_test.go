package cli

import (
	"testing"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/host/mcpsource"
)

// TestUpstreamName: --name defaults to the package or program an upstream
// runs, or its URL's host, in the source-name charset.
func TestUpstreamName(t *testing.T) {
	for line, want := range map[string]string{
		"npx -y @modelcontextprotocol/server-everything":           "server-everything",
		"npx -y @modelcontextprotocol/server-filesystem /srv/docs": "server-filesystem",
		"npx @scope/pkg@1.2.3 --port 3":                            "pkg",
		"uvx mcp-server-fetch":                                     "mcp-server-fetch",
		"uv run server.py":                                         "server",
		"python3 ./My_Server.py":                                   "my_server",
		"/opt/bin/ordo serve":                                      "ordo",
		"go run ./cmd/Weather.Tool":                                "weather-tool",
		"./2fast":                                                  "fast",
	} {
		argv, err := mcpsource.SplitCommand(line)
		if err != nil {
			t.Fatal(err)
		}
		if got := upstreamName(config.Upstream{Command: argv}); got != want {
			t.Errorf("%s: %q, want %q", line, got, want)
		}
	}
	for url, want := range map[string]string{
		"https://mcp.example.com/mcp": "mcp-example-com",
		"http://127.0.0.1:8080/mcp":   "",
		"http://localhost:8080/mcp":   "localhost",
	} {
		if got := upstreamName(config.Upstream{URL: url}); got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
}
