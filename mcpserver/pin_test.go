package mcpserver_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/policy"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testmcp"
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

	now := changeAdd(calc, e.host, old.Hash())
	if now == "" {
		t.Fatal("the host never saw the new calc.add")
	}

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

// changeAdd gives the upstream's add tool a new optional input field,
// keeping its description and annotations (so its risk), and returns its
// contract hash once h's catalog has it ("" if it never does).
func changeAdd(calc *calcUpstream, h *host.Host, old string) string {
	testmcp.AddAdd(calc.mcp, mcp.WithBoolean("round"))
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if tool, ok := h.Lookup("calc.add"); ok && tool.Hash() != old {
			return tool.Hash()
		}
	}
	return ""
}

// A direct call (the gateway) the person confirms inline while its tool
// changes its contract does not run against the new one: the run waits at
// contract_changed, the call's answer says so with the changes, and
// approve runs it.
func TestGatewayCallConfirmedBeforeAChange(t *testing.T) {
	calc := newCalcUpstream(t)
	e := newGatewayEnv(t, agent.Config{Policy: policy.Config{ConfirmTools: []string{"calc.add"}}},
		host.WithUpstreams(host.UpstreamSpec{Name: "calc", URL: calc.url(), BearerToken: calcToken, PollInterval: 50 * time.Millisecond}))
	old, ok := e.host.Lookup("calc.add")
	if !ok {
		t.Fatal("calc.add is not in the catalog")
	}
	var now string
	h := &elicitor{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult {
		now = changeAdd(calc, e.host, old.Hash()) // while the person reads the question
		return accept(map[string]any{"decision": "approve"})
	}}
	c := e.stdioClient(t, clientOpts{opts: []client.ClientOption{client.WithElicitationHandler(h)}})
	code, body := toolError(t, c, "call_tool", map[string]any{"tool": "calc.add", "arguments": map[string]any{"a": 2, "b": 3}})
	details := body["details"].(map[string]any)
	changes, _ := details["changes"].([]any)
	if code != contracts.CodeApprovalRequired || now == "" || len(changes) != 1 ||
		changes[0].(map[string]any)["new"].(map[string]any)["hash"] != now || !strings.Contains(body["message"].(string), "calc.add (input_schema)") {
		t.Fatalf("confirmed call: %d %v", code, body)
	}
	out := call(t, c, "approve", map[string]any{"run_id": details["run_id"], "decision": "approve"})
	if out["status"] != "completed" {
		t.Fatalf("approve the change: %v", out)
	}
}
