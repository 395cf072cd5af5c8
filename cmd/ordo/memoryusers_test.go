package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
)

// TestServeMemoryIsPerUser: two users of one `ordo serve --http`. What ann
// ran, saved and said (a template, one learned from her runs, a session, her
// past plans) is memory ann's planning uses; bob, with the same goal, is
// offered none of it, cannot list, run or overwrite her template, nor save
// her run as his, nor read her session, and his planner is shown no past
// plan.
func TestServeMemoryIsPerUser(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	llm := llmtest.New(t,
		llmtest.Reply{Role: "planner", Content: greetPlan}, llmtest.Reply{Role: "composer", Content: "Said hello."},
		llmtest.Reply{Role: "planner", Content: greetPlan}, llmtest.Reply{Role: "composer", Content: "Said hello again."},
		llmtest.Reply{Role: "planner", Content: greetPlan}, llmtest.Reply{Role: "planner", Content: greetPlan})
	e := newEnv(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte("hitl: {enabled: false}\nhttp:\n  tokens:\n    - {name: ann, token_env: ANN_TOKEN, role: user}\n    - {name: bob, token_env: BOB_TOKEN, role: user}\n"), 0o600)
	const ann, bob = "ann-token-0123456789abcdef", "bob-token-0123456789abcdef"
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "--config", cfg, "serve", "--http", "127.0.0.1:0")
	cmd.Dir, cmd.Env = repoRoot, append(e.vars, "ANN_TOKEN="+ann, "BOB_TOKEN="+bob,
		"ORDO_LLM_BASE_URL="+llm.URL, "ORDO_LLM_MODEL=test-model", "OPENAI_API_KEY=sk-test")
	url, _ := listening(t, cmd)
	call := func(token, name string, args map[string]any) (string, bool) {
		res := mcpCall(t, ctx, url, token, name, args)
		return testmcp.Text(res), res.IsError
	}
	mustOK := func(token, name string, args map[string]any) string {
		text, isErr := call(token, name, args)
		if isErr {
			t.Fatalf("%s: %s", name, text)
		}
		return text
	}
	runID := func(text string) string {
		_, rest, _ := strings.Cut(text, `"run_id":"`)
		id, _, _ := strings.Cut(rest, `"`)
		return id
	}

	first := runID(mustOK(ann, "execute", map[string]any{"goal": "greet the world"}))
	mustOK(ann, "execute", map[string]any{"goal": "greet the world", "session_id": "s1"})
	mustOK(ann, "save_template", map[string]any{"run_id": first, "name": "greeting"})
	// Two completed runs of one goal: the collector learns a template too.
	testwait.For(t, 30*time.Second, func() error {
		if text := mustOK(ann, "list_templates", nil); !strings.Contains(text, `"count":2`) {
			return fmt.Errorf("ann's templates: %s", text)
		}
		return nil
	})
	plannerCall := func(i int) string {
		n := 0
		for _, r := range llm.Requests() {
			if r.Role == "planner" {
				if n == i {
					return r.Messages[len(r.Messages)-1].Content
				}
				n++
			}
		}
		t.Fatalf("no planner call %d", i)
		return ""
	}
	// ann's memory is in use (the check below can fail).
	if text := mustOK(ann, "plan", map[string]any{"goal": "greet the world"}); !strings.Contains(text, `"template":{"name"`) ||
		!strings.Contains(plannerCall(2), "past_plans") {
		t.Fatalf("ann's own memory is not used: %s\n%s", text, plannerCall(2))
	}

	if text := mustOK(bob, "plan", map[string]any{"goal": "greet the world"}); strings.Contains(text, `"template":{`) ||
		strings.Contains(plannerCall(3), "past_plans") {
		t.Fatalf("bob got ann's memory: %s\n%s", text, plannerCall(3))
	}
	if text := mustOK(bob, "list_templates", nil); !strings.Contains(text, `"count":0`) {
		t.Fatalf("bob lists ann's templates: %s", text)
	}
	for _, name := range []string{"greeting", "learned-greet-the-world"} {
		if text, isErr := call(bob, "run_template", map[string]any{"name": name}); !isErr || !strings.Contains(text, `"code":1000`) {
			t.Fatalf("bob runs ann's template %s: %s", name, text)
		}
	}
	if text, isErr := call(bob, "save_template", map[string]any{"run_id": first, "name": "greeting"}); !isErr || !strings.Contains(text, `"code":3001`) {
		t.Fatalf("bob saves ann's run as a template: %s", text)
	}
	if text, _ := call(bob, "get_session", map[string]any{"session_id": "s1"}); strings.Contains(text, "run_") {
		t.Fatalf("bob reads ann's session: %s", text)
	}
	if text := mustOK(ann, "list_templates", nil); !strings.Contains(text, `"count":2`) || !strings.Contains(text, `"name":"greeting"`) {
		t.Fatalf("ann's templates changed: %s", text)
	}
}
