package text_test

import (
	"testing"

	"github.com/ordo-run/ordo/host/hosttest"
)

// TestThroughHost runs the real ordo-plugin-text binary under the host.
func TestThroughHost(t *testing.T) {
	p := hosttest.Start(t, hosttest.Build(t, "text"), "text", t.TempDir(), nil)
	got := p.Call("text.template", map[string]any{"template": "Created {{page_url}}", "values": map[string]any{"page_url": "ordo://notes/p1"}}, "")
	if got["text"] != "Created ordo://notes/p1" {
		t.Fatalf("template = %v", got)
	}
	got = p.Call("text.extract_json_field", map[string]any{"json": `{"a":[1,2]}`, "path": "$.a[1]"}, "")
	if got["value"] != float64(2) {
		t.Fatalf("extract = %v", got)
	}
	if got = p.Call("text.join", map[string]any{"items": []any{"x", "y"}, "separator": "+"}, ""); got["text"] != "x+y" {
		t.Fatalf("join = %v", got)
	}
	p.Refused("text.template", map[string]any{"template": "{{missing}}", "values": map[string]any{}}, "", "values")
}
