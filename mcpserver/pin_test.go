package mcpserver_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testwait"
)

// An upstream MCP server (mcp-go) changes its tool's input schema, keeping
// its annotations, between the plan's approval and its execution: approve
// (over a real mcp-go client) stops at contract_changed naming the tool,
// the changed part and both hashes, before any call; approving that runs
// the plan with the new contract.
func TestUpstreamSchemaChangeAsksAgain(t *testing.T) {
	calc := newCalcUpstream(t)
	e := newEnv(t, withHost(host.WithUpstreams(host.UpstreamSpec{Name: "calc", URL: calc.url(), BearerToken: calcToken, PollInterval: 50 * time.Millisecond})))
	c := e.stdioClient(t, clientOpts{})
	old, ok := e.host.Lookup("calc.add")
	if !ok {
		t.Fatal("calc.add is not in the catalog")
	}
	waiting := call(t, c, "plan", map[string]any{"plan": addPlan(2, 3)})
	if waiting["status"] != "awaiting_approval" {
		t.Fatalf("plan: %v", waiting)
	}

	calc.mcp.AddTool(mcp.NewTool("add", mcp.WithDescription("Adds two numbers."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required()), mcp.WithBoolean("round"),
		mcp.WithOutputSchema[struct {
			Sum float64 `json:"sum"`
		}](),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"sum": req.GetFloat("a", 0) + req.GetFloat("b", 0)}, "sum"), nil
		})
	var now string
	testwait.Until(t, 30*time.Second, "the new calc.add", func() bool {
		tool, ok := e.host.Lookup("calc.add")
		if ok {
			now = tool.Hash()
		}
		return ok && now != old.Hash()
	})

	out := call(t, c, "approve", map[string]any{"run_id": waiting["run_id"], "decision": "approve", "seq": waiting["interrupt"].(map[string]any)["seq"]})
	in := out["interrupt"].(map[string]any)
	if out["status"] != "interrupted" || in["kind"] != "contract_changed" || out["steps"] != nil {
		t.Fatalf("approve after the change: %v", out)
	}
	changes := in["changes"].([]any)
	ch := changes[0].(map[string]any)
	if len(changes) != 1 || ch["tool"] != "calc.add" || !slices.Equal(ch["fields"].([]any), []any{"input_schema"}) ||
		ch["old"].(map[string]any)["hash"] != old.Hash() || ch["new"].(map[string]any)["hash"] != now ||
		!slices.Equal(ch["actions"].([]any), []any{"sum_them"}) || !slices.Equal(in["decisions"].([]any), []any{"approve", "edit", "reject"}) {
		t.Fatalf("interrupt: %v", in)
	}
	out = call(t, c, "approve", map[string]any{"run_id": waiting["run_id"], "decision": "approve", "seq": in["seq"]})
	if out["status"] != "completed" {
		t.Fatalf("approve the change: %v", out)
	}
	rec := call(t, c, "run_status", map[string]any{"run_id": waiting["run_id"]})
	plans := rec["plans"].([]any)
	if len(plans) != 2 || plans[1].(map[string]any)["source"] != "repin" || rec["state"].(map[string]any)["sum"] != float64(5) {
		t.Fatalf("run: plans %v, state %v", plans, rec["state"])
	}
}
