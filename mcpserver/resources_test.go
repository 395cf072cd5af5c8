package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestResources(t *testing.T) {
	e := newEnv(t)
	c := e.stdioClient(t, clientOpts{})
	read := func(uri string) string {
		t.Helper()
		res, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		return res.Contents[0].(mcp.TextResourceContents).Text
	}
	if s := read("ordo://schemas/action-plan"); !strings.Contains(s, `"actions"`) {
		t.Fatalf("plan schema: %.80s", s)
	}
	if s := read("ordo://catalog"); !strings.Contains(s, "text.upper") || !strings.Contains(s, "notes.delete") {
		t.Fatalf("catalog: %.200s", s)
	}
	out := call(t, c, "plan", map[string]any{"plan": deletePlan("r")})
	id := out["run_id"].(string)
	if s := read("ordo://runs/" + id); !strings.Contains(s, id) || !strings.Contains(s, `"plans"`) {
		t.Fatalf("run: %.200s", s)
	}
	if s := read("ordo://runs/" + id + "/mermaid"); !strings.Contains(s, "flowchart") || !strings.Contains(s, "notes.delete") {
		t.Fatalf("mermaid: %s", s)
	}
	if _, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "ordo://runs/run_nope"}}); err == nil {
		t.Fatal("unknown run read")
	}
}
