package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testmcp"
)

// A gateway caller who spells a secret field otherwise ("API_KEY" for
// api_key) still has it recorded redacted: the Go plugin's decoder takes
// either spelling for the field.
func TestGatewaySecretSpelledOtherwiseRedacted(t *testing.T) {
	e := newGatewayEnv(t, agent.Config{})
	c := e.stdioClient(t, clientOpts{})
	out := call(t, c, "vault__read", map[string]any{"name": "db", "api_key": "s3cret-lower", "API_KEY": "s3cret-upper"})
	if out["value"] != "entry db" {
		t.Fatalf("vault__read: %v", out)
	}
	raw, _ := json.Marshal(latestGatewayRun(t, c, "vault.read"))
	if strings.Contains(string(raw), "s3cret") || !strings.Contains(string(raw), `"name":"db"`) {
		t.Fatalf("audit record: %s", raw)
	}
}

// An upstream whose schema marks a secret inside an object argument, and
// that repeats it in its error and in its result: the argument is recorded
// redacted whole, and neither the audit record nor what the caller gets
// back holds the secret.
func TestGatewayUpstreamNestedAndRepeatedSecrets(t *testing.T) {
	up := server.NewMCPServer("dbish", "1.0.0")
	up.AddTool(mcp.NewToolWithRawSchema("connect", "Connects to a database.", json.RawMessage(`{"type":"object","required":["db"],"properties":{
	  "db":{"type":"object","properties":{"host":{"type":"string"},"password":{"type":"string","writeOnly":true}}}}}`)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			db, _ := req.GetArguments()["db"].(map[string]any)
			if db["host"] == "down" {
				return mcp.NewToolResultError(fmt.Sprintf("cannot reach %v as admin:%v", db["host"], db["password"])), nil
			}
			return mcp.NewToolResultStructured(map[string]any{"connected": fmt.Sprint(db)}, "ok"), nil
		})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(hs.Close)
	e := newGatewayEnv(t, agent.Config{}, host.WithUpstreams(host.UpstreamSpec{Name: "pg", URL: hs.URL + "/mcp"}))
	c := e.stdioClient(t, clientOpts{})

	out := call(t, c, "pg__connect", map[string]any{"db": map[string]any{"host": "up", "password": "s3cret-nested"}})
	if raw, _ := json.Marshal(out); strings.Contains(string(raw), "s3cret") || !strings.Contains(string(raw), "[REDACTED]") {
		t.Fatalf("the caller got %s", raw)
	}
	raw, _ := json.Marshal(latestGatewayRun(t, c, "pg.connect"))
	if strings.Contains(string(raw), "s3cret") || !strings.Contains(string(raw), `"db":"[REDACTED]"`) {
		t.Fatalf("audit record: %s", raw)
	}

	res, err := callRaw(c, "pg__connect", map[string]any{"db": map[string]any{"host": "down", "password": "s3cret-refused"}}, nil)
	if err != nil || !res.IsError || strings.Contains(testmcp.Text(res), "s3cret") || !strings.Contains(testmcp.Text(res), "admin:[REDACTED]") {
		t.Fatalf("refused connect: %v %+v", err, res)
	}
	raw, _ = json.Marshal(latestGatewayRun(t, c, "pg.connect"))
	if strings.Contains(string(raw), "s3cret") {
		t.Fatalf("audit record: %s", raw)
	}
}
