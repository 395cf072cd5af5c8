package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
)

// eras are the two protocol generations: 2026-07-28 (multi round-trip
// requests) and the legacy one, where mcp-go turns them into
// server-initiated elicitation and sampling requests.
var eras = []struct {
	name   string
	legacy bool
}{{"modern", false}, {"legacy", true}}

func TestElicitationApprovesInline(t *testing.T) {
	e := newEnv(t)
	for _, era := range eras {
		h := &elicitor{answer: func(p mcp.ElicitationParams) *mcp.ElicitationResult {
			return accept(map[string]any{"decision": "approve"})
		}}
		co := clientOpts{legacy: era.legacy, opts: []client.ClientOption{client.WithElicitationHandler(h)}}
		t.Run(era.name, func(t *testing.T) {
			transports(t, e, co, func(t *testing.T, c *client.Client) {
				before := h.count()
				id := "inline-" + era.name + "-" + t.Name()
				out := call(t, c, "execute", map[string]any{"plan": deletePlan(id)})
				if out["status"] != "completed" {
					t.Fatalf("execute: %v", out)
				}
				// One question for the plan, one for the destructive step.
				if n := h.count() - before; n != 2 {
					t.Fatalf("%d elicitations, want 2", n)
				}
				h.mu.Lock()
				last := h.seen[len(h.seen)-1]
				h.mu.Unlock()
				if !strings.Contains(last.Message, "notes.delete") {
					t.Fatalf("step question does not name the tool: %q", last.Message)
				}
				rec := call(t, c, "run_status", map[string]any{"run_id": out["run_id"]})
				ds := rec["decisions"].([]any)
				if len(ds) != 2 || ds[1].(map[string]any)["decision"].(map[string]any)["by"] == "" {
					t.Fatalf("decisions: %v", ds)
				}
			})
		})
	}
}

func TestElicitationDeclinedLeavesRunInterrupted(t *testing.T) {
	e := newEnv(t)
	var action mcp.ElicitationResponseAction
	h := &elicitor{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action}}
	}}
	// mcp-go's stdio session is process-wide: one stdio client at a time.
	c := e.stdioClient(t, clientOpts{opts: []client.ClientOption{client.WithElicitationHandler(h)}})
	for _, action = range []mcp.ElicitationResponseAction{mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel} {
		out := call(t, c, "execute", map[string]any{"plan": upperPlan("no")})
		if out["status"] != "interrupted" || !strings.Contains(out["note"].(string), string(action)) {
			t.Fatalf("%s: %v", action, out)
		}
		if out["interrupt"].(map[string]any)["kind"] != "plan_approval" {
			t.Fatalf("%s: interrupt %v", action, out["interrupt"])
		}
		rec := call(t, c, "run_status", map[string]any{"run_id": out["run_id"]})
		if rec["status"] != "interrupted" || rec["steps"] != nil {
			t.Fatalf("%s: record changed: %v", action, rec)
		}
		// The client can still settle it with approve.
		done := call(t, c, "approve", map[string]any{"run_id": out["run_id"], "decision": "reject"})
		if done["status"] != "rejected" {
			t.Fatalf("reject: %v", done)
		}
	}
}

func TestSamplingPlansWithClientModel(t *testing.T) {
	e := newEnv(t, withSampling())
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			h := &sampler{}
			co := clientOpts{legacy: era.legacy, opts: []client.ClientOption{client.WithSamplingHandler(h)}}
			transports(t, e, co, func(t *testing.T, c *client.Client) {
				h.mu.Lock()
				h.plans = append(h.plans, upperPlan("sampled"))
				h.seen = nil
				h.mu.Unlock()
				planned := call(t, c, "plan", map[string]any{"goal": "shout sampled"})
				if planned["status"] != "awaiting_approval" {
					t.Fatalf("plan: %v", planned)
				}
				done := call(t, c, "approve", map[string]any{"run_id": planned["run_id"], "decision": "approve"})
				if done["status"] != "completed" || done["result"].(map[string]any)["answer"] != "Done: the text was shouted." {
					t.Fatalf("approve: %v", done)
				}
				if got := strings.Join(h.roles(), ","); got != "planner,composer" {
					t.Fatalf("sampled roles %q, want planner,composer", got)
				}
				h.mu.Lock()
				sys := h.seen[0].SystemPrompt
				h.mu.Unlock()
				if !strings.Contains(sys, "JSON Schema") {
					t.Fatalf("planner prompt does not carry the plan schema")
				}
				calls := done["llm_calls"].(map[string]any)
				if calls["planner"] != 1.0 || calls["composer"] != 1.0 {
					t.Fatalf("llm_calls %v", calls)
				}
			})
		})
	}
}

func TestNoModelNeedsCallerPlan(t *testing.T) {
	e := newEnv(t, withSampling())
	c := e.stdioClient(t, clientOpts{}) // no sampling offered
	code, body := toolError(t, c, "plan", map[string]any{"goal": "do something"})
	msg, _ := body["message"].(string)
	if code != contracts.CodeNoLLM || !strings.Contains(msg, "ordo://schemas/action-plan") {
		t.Fatalf("code %d: %v", code, body)
	}
	// A caller plan still works without any model.
	if out := call(t, c, "plan", map[string]any{"plan": upperPlan("ok")}); out["status"] != "awaiting_approval" {
		t.Fatalf("plan: %v", out)
	}
}
