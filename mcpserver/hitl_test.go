package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory"
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

// A client that offers sampling, approves the plan, and then never answers
// a sampling request: the first one shown times out, and the model requests
// queued behind it (three parallel steps each needing the filler) and after
// it fail at once, so the run stops and lets go of its lease. Before, the
// third filler waited forever to be shown and the run stayed held, its
// approval unrecorded, refusing every approve (3004 lease held).
func TestSamplingClientThatNeverAnswers(t *testing.T) {
	e := newEnv(t, withSamplingTimeout(50*time.Millisecond))
	walkAway := samplerFunc(func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return nil, errors.New("the person closed the window")
	})
	approve := &elicitor{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult {
		return accept(map[string]any{"decision": "approve"})
	}}
	c := e.stdioClient(t, clientOpts{opts: []client.ClientOption{client.WithSamplingHandler(walkAway), client.WithElicitationHandler(approve)}})
	step := func(id string) map[string]any { // text.upper with its text unbound: the filler is asked
		return map[string]any{"id": id, "tool": "text.upper", "intent": "transform", "requires": []any{}, "produces": []any{"upper"}}
	}
	plan := map[string]any{"version": "1.0", "goal": "shout three things", "timezone": "UTC",
		"actions": []any{step("a1"), step("a2"), step("a3")}}
	if _, err := callRaw(c, "execute", map[string]any{"plan": plan}, nil); err == nil {
		t.Fatal("execute succeeded with a client that answers no sampling request")
	}
	runs, err := e.store.List(context.Background(), memory.Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		run, err := e.store.Load(context.Background(), runs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Decisions) == 1 && (run.Status.Final() || run.Status == contracts.RunInterrupted) && mcpserver.ParkedJobs(e.srv) == 0 {
			if run.LLMCalls["filler"] == 0 {
				t.Fatalf("stopped %s with llm calls %v, want the fillers", run.Status, run.LLMCalls)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s with %d decisions, %d jobs parked: the run waits forever on a sampling request it never showed",
				run.Status, len(run.Decisions), mcpserver.ParkedJobs(e.srv))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Nobody holds it: it can be settled.
	if out := call(t, c, "run_status", map[string]any{"run_id": runs[0].ID}); out["status"] == "running" {
		t.Fatalf("run %v", out)
	}
}

type samplerFunc func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)

func (f samplerFunc) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return f(ctx, req)
}

// TestSamplingParkedCallsAreBounded: a parked call outlives its request
// (a run, its lease and goroutines held until the answer or the timeout),
// so a client that never answers could pile them up for free. Past 64 of a
// user's, a call that would sample is refused with 7001 before it starts.
func TestSamplingParkedCallsAreBounded(t *testing.T) {
	e := newEnv(t, withSamplingTimeout(time.Minute))
	walkAway := samplerFunc(func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return nil, errors.New("not now")
	})
	c := e.stdioClient(t, clientOpts{opts: []client.ClientOption{client.WithSamplingHandler(walkAway)}})
	for i := range 64 {
		if _, err := callRaw(c, "plan", map[string]any{"goal": fmt.Sprintf("shout %d", i)}, nil); err == nil {
			t.Fatalf("plan %d succeeded with a client that answers no sampling request", i)
		}
	}
	if n := mcpserver.ParkedJobs(e.srv); n != 64 {
		t.Fatalf("%d calls parked, want 64", n)
	}
	code, body := toolError(t, c, "plan", map[string]any{"goal": "one more"})
	if code != contracts.CodeLLMFailed || !strings.Contains(body["message"].(string), "64 of your calls") {
		t.Fatalf("the 65th: %d %v", code, body)
	}
	if n := mcpserver.ParkedJobs(e.srv); n != 64 {
		t.Fatalf("%d calls parked after the refusal, want 64", n)
	}
}
