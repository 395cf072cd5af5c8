package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestToolListing checks every tool as a client sees it: input and output
// schemas that compile, and every annotation hint set explicitly.
func TestToolListing(t *testing.T) {
	e := newEnv(t)
	c := httpClient(t, e.httpServer(t).URL, adminToken, clientOpts{})
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"plan": true, "execute": true, "approve": true, "run_status": true, "list_runs": true,
		"search_tools": true, "add_plugin": true, "remove_plugin": true, "list_plugins": true}
	for _, tool := range res.Tools {
		delete(want, tool.Name)
		a := tool.Annotations
		if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil || a.Title == "" {
			t.Errorf("%s: annotation hints not all set: %+v", tool.Name, a)
		}
		raw, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Input  json.RawMessage `json:"inputSchema"`
			Output json.RawMessage `json:"outputSchema"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		for kind, s := range map[string]json.RawMessage{"input": doc.Input, "output": doc.Output} {
			if _, err := compile(s); err != nil {
				t.Errorf("%s %s schema: %v (%s)", tool.Name, kind, err, s)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("tools missing: %v", want)
	}
}

func compile(s json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("mem:///s.json")
}
