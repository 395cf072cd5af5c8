package mcpserver_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
)

func getPrompt(c *client.Client, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return c.GetPrompt(context.Background(), mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: name, Arguments: args}})
}

func promptText(t *testing.T, res *mcp.GetPromptResult) string {
	t.Helper()
	tc, ok := res.Messages[0].Content.(mcp.TextContent)
	if !ok {
		t.Fatalf("first message is %T, want text", res.Messages[0].Content)
	}
	return tc.Text
}

var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)\n```")

func TestPromptsList(t *testing.T) {
	e := newEnv(t)
	transports(t, e, clientOpts{}, func(t *testing.T, c *client.Client) {
		res, err := c.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		args := map[string][]string{}
		for _, p := range res.Prompts {
			if p.Description == "" {
				t.Fatalf("prompt %s has no description", p.Name)
			}
			for _, a := range p.Arguments {
				args[p.Name] = append(args[p.Name], a.Name)
				if a.Name != "services" && !a.Required {
					t.Fatalf("%s.%s should be required", p.Name, a.Name)
				}
			}
		}
		if strings.Join(args["write_plan"], ",") != "goal,services" || strings.Join(args["review_run"], ",") != "run_id" {
			t.Fatalf("prompts and arguments: %v", args)
		}
	})
}

// TestWritePlanPrompt follows the prompt as an assistant would: the plan it
// writes from the contracts and schema the prompt gives is one Ordo runs.
func TestWritePlanPrompt(t *testing.T) {
	e := newEnv(t)
	transports(t, e, clientOpts{}, func(t *testing.T, c *client.Client) {
		res, err := getPrompt(c, "write_plan", map[string]string{"goal": "shout the word hello", "services": "text"})
		if err != nil {
			t.Fatal(err)
		}
		text := promptText(t, res)
		for _, want := range []string{"Goal: shout the word hello", "only tools of these services: text", `"plan" tool`, "input_bindings", "ordo://schemas/action-plan"} {
			if !strings.Contains(text, want) {
				t.Fatalf("prompt lacks %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "Output JSON only") || strings.Contains(text, "role: planner") {
			t.Fatalf("prompt carries planner-only instructions:\n%s", text)
		}
		blocks := jsonBlock.FindAllStringSubmatch(text, -1)
		if len(blocks) != 2 {
			t.Fatalf("want a contracts block and a schema block, got %d:\n%.3000s", len(blocks), text)
		}
		var cands []contracts.Contract
		if err := json.Unmarshal([]byte(blocks[0][1]), &cands); err != nil || len(cands) == 0 {
			t.Fatalf("contracts block: %v\n%s", err, blocks[0][1])
		}
		for _, ct := range cands {
			if ct.Service != "text" {
				t.Fatalf("services=text gave %s", ct.Tool)
			}
		}
		if cands[0].Tool != "text.upper" || cands[0].ProducesMap["upper"] == "" {
			t.Fatalf("best candidate: %+v", cands[0])
		}
		if string(contracts.PlanSchema()) != blocks[1][1] {
			t.Fatal("schema block is not the Action Plan schema")
		}
		// Write the plan from the prompt's facts and run it.
		ct := cands[0]
		var key string
		for k := range ct.ProducesMap {
			key = k
		}
		plan := map[string]any{"version": "1.0", "goal": "shout the word hello", "timezone": "UTC", "actions": []any{
			map[string]any{"id": "a1", "tool": ct.Tool, "intent": "transform", "requires": []any{}, "produces": []any{key}, "inputs": map[string]any{"text": "hello"}},
		}}
		out := call(t, c, "execute", map[string]any{"plan": plan, "options": map[string]any{"auto_approve": true}})
		if out["status"] != "completed" {
			t.Fatalf("the prompt's plan did not run: %v", out)
		}

		// Every service when none is named; the goal is required.
		res, err = getPrompt(c, "write_plan", map[string]string{"goal": "delete a note"})
		if err != nil {
			t.Fatal(err)
		}
		if text := promptText(t, res); !strings.Contains(text, `"tool": "notes.delete"`) {
			t.Fatalf("goal about notes lacks notes.delete:\n%.600s", text)
		}
		if _, err := getPrompt(c, "write_plan", map[string]string{"goal": "  "}); err == nil || !strings.Contains(err.Error(), "needs a goal") {
			t.Fatalf("empty goal: %v", err)
		}
	})
}

func TestReviewRunPrompt(t *testing.T) {
	e := newEnv(t)
	ts := e.httpServer(t)
	noPlanApproval := map[string]any{"hitl": map[string]any{"enabled": true, "plan_approval": false}}
	bob := httpClient(t, ts.URL, userToken, clientOpts{})
	ada := httpClient(t, ts.URL, adminToken, clientOpts{})
	out := call(t, bob, "execute", map[string]any{"plan": deletePlan("n1"), "options": noPlanApproval})
	runID := out["run_id"].(string)

	res, err := getPrompt(bob, "review_run", map[string]string{"run_id": runID})
	if err != nil {
		t.Fatal(err)
	}
	text := promptText(t, res)
	for _, want := range []string{
		"Run " + runID, "Status: interrupted", "Owner: bob", "Plan version 1 of 1 (source: caller)",
		"- a2: notes.delete (write), policy require_confirm", "```mermaid\nflowchart",
		"a1 text.upper attempt 1: succeeded, produced upper",
		"Waiting for: step_approval of a2 (notes.delete)", `Payload: {"id":"N1"}`,
		`{"run_id": "` + runID + `", "decision": one of approve | edit | skip | reject}`,
	} {
		if !strings.Contains(text, want) {
			t.Fatalf("review lacks %q:\n%s", want, text)
		}
	}
	emb, ok := res.Messages[1].Content.(mcp.EmbeddedResource)
	if !ok {
		t.Fatalf("second message is %T, want the run record", res.Messages[1].Content)
	}
	rc := emb.Resource.(mcp.TextResourceContents)
	var rec contracts.Run
	if err := json.Unmarshal([]byte(rc.Text), &rec); err != nil || rec.ID != runID || rc.URI != "ordo://runs/"+runID {
		t.Fatalf("embedded record %s: %v", rc.URI, err)
	}

	call(t, bob, "approve", map[string]any{"run_id": runID, "decision": "approve", "note": "ok"})
	res, err = getPrompt(bob, "review_run", map[string]string{"run_id": runID})
	if err != nil {
		t.Fatal(err)
	}
	text = promptText(t, res)
	for _, want := range []string{"Status: completed", "Decision: step_approval of a2 answered approve by bob", "(ok)", "Result (template): "} {
		if !strings.Contains(text, want) {
			t.Fatalf("review of the completed run lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Waiting for") {
		t.Fatalf("a completed run waits for nothing:\n%s", text)
	}

	// Runs are private: bob cannot review ada's run; the admin can review his.
	adas := call(t, ada, "plan", map[string]any{"plan": upperPlan("mine")})["run_id"].(string)
	if _, err := getPrompt(bob, "review_run", map[string]string{"run_id": adas}); err == nil {
		t.Fatal("bob reviewed ada's run")
	}
	if _, err := getPrompt(ada, "review_run", map[string]string{"run_id": runID}); err != nil {
		t.Fatalf("admin review: %v", err)
	}
	if _, err := getPrompt(bob, "review_run", map[string]string{"run_id": "run_nope"}); err == nil || !strings.Contains(err.Error(), "run_nope") {
		t.Fatalf("unknown run: %v", err)
	}
}
