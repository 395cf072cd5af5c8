package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
)

// TestServeTemplates: over `ordo serve` a completed run is saved as a
// template (save_template), listed (list_templates), offered by the next
// plan of a like goal (its template field), and run with new inputs
// without a planner call (run_template); the run from it is counted on
// the template (workflow memory). `ordo templates` then lists, shows and
// deletes it as the same user.
func TestServeTemplates(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t,
		llmtest.Reply{Role: "planner", Content: greetPlan}, llmtest.Reply{Role: "composer", Content: "Said hello."},
		llmtest.Reply{Role: "planner", Content: greetPlan},
		llmtest.Reply{Role: "composer", Content: "Said hello to Ada."})
	e := newEnv(t)
	c := serveStdio(t, e, "hitl: {enabled: false}\nllm:\n  base_url: "+srv.URL+"\n  model: test-model\n")
	type view struct {
		RunID    string `json:"run_id"`
		Status   string
		Template *struct {
			Name  string
			Score float64
		}
	}
	decode := func(name string, args map[string]any) (v view, text string) {
		res := callBudget(t, c, name, args)
		text = testmcp.Text(res)
		if res.IsError {
			t.Fatalf("%s: %s", name, text)
		}
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("%s: %v %s", name, err, text)
		}
		return v, text
	}
	first, _ := decode("execute", map[string]any{"goal": "greet the world"})
	if first.Status != "completed" {
		t.Fatalf("execute: %+v", first)
	}
	if res := callBudget(t, c, "save_template", map[string]any{"run_id": "run_nope", "name": "greeting"}); !res.IsError || !strings.Contains(testmcp.Text(res), `"code":3001`) {
		t.Fatalf("save_template of an unknown run: %s", testmcp.Text(res))
	}
	if _, text := decode("save_template", map[string]any{"run_id": first.RunID, "name": "greeting"}); !strings.Contains(text, `"text.template"`) {
		t.Fatalf("save_template: %s", text)
	}
	if _, text := decode("list_templates", map[string]any{}); !strings.Contains(text, `"count":1`) || !strings.Contains(text, `"name":"greeting"`) {
		t.Fatalf("list_templates: %s", text)
	}
	planned, text := decode("plan", map[string]any{"goal": "greet the world"})
	if planned.Template == nil || planned.Template.Name != "greeting" || planned.Template.Score <= 0 {
		t.Fatalf("plan offers no template: %s", text)
	}
	if res := callBudget(t, c, "run_template", map[string]any{"name": "greeting", "inputs": map[string]any{"nope.values": 1}}); !res.IsError || !strings.Contains(testmcp.Text(res), `"code":1000`) {
		t.Fatalf("run_template with a bad input key: %s", testmcp.Text(res))
	}
	ran, text := decode("run_template", map[string]any{"name": "greeting", "session_id": "hello",
		"inputs": map[string]any{"greet.values": map[string]any{"name": "Ada"}}})
	if ran.Status != "completed" || !strings.Contains(text, "Ada") {
		t.Fatalf("run_template: %s", text)
	}
	if _, text := decode("get_session", map[string]any{"session_id": "hello"}); !strings.Contains(text, ran.RunID) {
		t.Fatalf("the template run is no turn of its session: %s", text)
	}
	planner := 0
	for _, r := range srv.Requests() {
		if r.Role == "planner" {
			planner++
		}
	}
	if planner != 2 {
		t.Fatalf("planner calls = %d, want 2 (run_template plans nothing)", planner)
	}
	// The collector runs in the background: the template's count follows.
	testwait.For(t, 30*time.Second, func() error {
		if _, text = decode("list_templates", map[string]any{}); !strings.Contains(text, `"successes":1`) {
			return fmt.Errorf("the run from the template was not counted: %s", text)
		}
		return nil
	})
	c.Close()

	r := e.ordo("", "templates", "list")
	r.want(t, 0)
	if !strings.Contains(r.stdout, "greeting") || !strings.Contains(r.stdout, "1 ok, 0 failed") {
		t.Fatalf("templates list: %s", r.stdout)
	}
	r = e.ordo("", "templates", "show", "greeting")
	r.want(t, 0)
	if !strings.Contains(r.stdout, "greet: text.template") || !strings.Contains(r.stdout, "greet.values") {
		t.Fatalf("templates show: %s", r.stdout)
	}
	e.ordo("", "templates", "show", "nope").want(t, 2)
	e.ordo("", "templates", "delete", "greeting").want(t, 0)
	r = e.ordo("", "templates", "list", "--json")
	r.wantOut(t, 0, `"count": 0`)
}
