package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/internal/testmcp"
)

// askView is the part of plan, execute and approve results these tests read.
type askView struct {
	RunID     string `json:"run_id"`
	Status    string
	Interrupt *struct {
		Kind        string
		Questions   []string
		Payload     json.RawMessage
		Decisions   []string
		Suggestions map[string]string
	}
	Result *struct{ Answer string }
}

func callAsk(t *testing.T, c *client.Client, name string, args map[string]any) askView {
	t.Helper()
	res := callBudget(t, c, name, args)
	var v askView
	if err := json.Unmarshal([]byte(testmcp.Text(res)), &v); err != nil || res.IsError {
		t.Fatalf("%s: %v %s", name, err, testmcp.Text(res))
	}
	return v
}

// criticAsks scripts a one-step haiku run whose critic asks the person
// about the first draft ("Which season?") and passes the second.
var criticAsks = []llmtest.Reply{
	{Role: "planner", Content: `{"version":"1.0","goal":"write","timezone":"UTC","actions":[
		 {"id":"g1","tool":"llm.generate","intent":"transform","requires":[],"produces":["text"],"inputs":{"instruction":"write a haiku"}}]}`},
	{Role: "tool", Content: "draft one"},
	{Role: "verifier", Content: `{"score":0.3,"status":"fail","next":"ask_user","question":"Which season?"}`},
	{Role: "filler", Content: `{"instruction":"write a winter haiku"}`},
	{Role: "tool", Content: "snow on the pine"},
	{Role: "verifier", Content: `{"score":0.9,"status":"pass"}`},
	{Role: "composer", Content: "snow on the pine"},
}

// TestServeCriticAsksThePerson: with verifier.mode llm and a prompts_dir
// overriding the verifier prompt, the critic's ask_user stops the run
// at a verify_question interrupt (no re-plan); approve with an answer
// retries the step with it. `ordo config validate` names a prompts_dir
// file that overrides no prompt.
func TestServeCriticAsksThePerson(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, criticAsks...)
	e := newEnv(t)
	prompts := filepath.Join(e.home, "prompts")
	os.MkdirAll(prompts, 0o700)
	os.WriteFile(filepath.Join(prompts, "verifier.md"), []byte("role: verifier\nJudge strictly; ask the person when the theme is open."), 0o600)
	cfg := "hitl: {enabled: false}\nverifier: {mode: llm, threshold: 0.8}\nprompts_dir: " + prompts + "\nllm:\n  base_url: " + srv.URL + "\n  model: test-model\n"
	c := serveStdio(t, e, cfg)
	v := callAsk(t, c, "execute", map[string]any{"goal": "a haiku"})
	if v.Status != "interrupted" || v.Interrupt.Kind != "verify_question" || v.Interrupt.Questions[0] != "Which season?" ||
		strings.Join(v.Interrupt.Decisions, ",") != "answer,approve,reject" || !strings.Contains(string(v.Interrupt.Payload), "draft one") {
		t.Fatalf("execute: %+v", v)
	}
	if res := callBudget(t, c, "approve", map[string]any{"run_id": v.RunID, "decision": "skip"}); !res.IsError || !strings.Contains(testmcp.Text(res), `"code":5003`) {
		t.Fatalf("skip on a verify_question: %s", testmcp.Text(res))
	}
	v = callAsk(t, c, "approve", map[string]any{"run_id": v.RunID, "decision": "answer", "answers": map[string]any{"season": "winter"}})
	if v.Status != "completed" || v.Result.Answer != "snow on the pine" {
		t.Fatalf("approve: %+v", v)
	}
	var judged, filler bool
	for _, r := range srv.Requests() {
		judged = judged || (r.Role == "verifier" && strings.Contains(r.Messages[0].Content, "Judge strictly"))
		filler = filler || (r.Role == "filler" && strings.Contains(r.Messages[1].Content, "winter"))
	}
	if !judged || !filler {
		t.Fatalf("prompt override used %v, answer reached the retry %v", judged, filler)
	}
	c.Close()

	os.WriteFile(filepath.Join(prompts, "verifer.md"), []byte("role: verifier\n"), 0o600)
	r := e.ordo("", "--config", filepath.Join(e.home, "ordo.yaml"), "config", "validate")
	r.want(t, 2)
	if !strings.Contains(r.stderr, "1014") || !strings.Contains(r.stderr, "prompts_dir") || !strings.Contains(r.stderr, "verifer.md") {
		t.Fatalf("config validate: %s", r.stderr)
	}
}

// TestServeRememberedClarification: an answer given to a clarifying
// question comes back from memory as a suggestion — in the next plan
// result of a like goal, and as the default of execute's elicitation
// form — and proceed_anyway plans without answers.
func TestServeRememberedClarification(t *testing.T) {
	t.Parallel()
	ask := llmtest.Reply{Role: "planner", Content: `{"version":"1.0","goal":"greet","timezone":"UTC","actions":[],"clarification_questions":["Whom should I greet?"]}`}
	greet := llmtest.Reply{Role: "planner", Content: greetPlan}
	said := llmtest.Reply{Role: "composer", Content: "Said hello."}
	srv := llmtest.New(t, ask, greet, said, ask, greet, said, ask, greet, said)
	e := newEnv(t)
	cfg := "hitl: {enabled: true, clarification: true, plan_approval: false}\nllm:\n  base_url: " + srv.URL + "\n  model: test-model\n"
	c := serveStdio(t, e, cfg)
	v := callAsk(t, c, "execute", map[string]any{"goal": "greet my friend"})
	if v.Interrupt == nil || v.Interrupt.Kind != "clarify" || len(v.Interrupt.Suggestions) != 0 {
		t.Fatalf("first run: %+v", v)
	}
	if v = callAsk(t, c, "approve", map[string]any{"run_id": v.RunID, "decision": "answer", "answers": map[string]any{"Whom should I greet?": "Ada"}}); v.Status != "completed" {
		t.Fatalf("answer: %+v", v)
	}
	c.Close() // serve learns from its finished runs before it exits

	c = serveStdio(t, e, cfg)
	v = callAsk(t, c, "plan", map[string]any{"goal": "greet my friend"})
	if v.Status != "needs_clarification" || v.Interrupt.Suggestions["Whom should I greet?"] != "Ada" ||
		!strings.Contains(strings.Join(v.Interrupt.Decisions, ","), "proceed_anyway") {
		t.Fatalf("plan: %+v", v)
	}
	if v = callAsk(t, c, "approve", map[string]any{"run_id": v.RunID, "decision": "proceed_anyway"}); v.Status != "completed" {
		t.Fatalf("proceed_anyway: %+v", v)
	}
	if !strings.Contains(srv.Requests()[4].Messages[1].Content, "proceed without answering") {
		t.Fatalf("the planner was not told to proceed: %s", srv.Requests()[4].Messages[1].Content)
	}
	c.Close()

	var mu sync.Mutex
	var forms []mcp.ElicitationParams
	h := elicitFunc(func(p mcp.ElicitationParams) *mcp.ElicitationResult {
		mu.Lock()
		defer mu.Unlock()
		forms = append(forms, p)
		def, _ := p.RequestedSchema.(map[string]any)["properties"].(map[string]any)["a1"].(map[string]any)["default"].(string)
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"a1": def}}}
	})
	c = serveStdio(t, e, cfg, client.WithElicitationHandler(h))
	if v = callAsk(t, c, "execute", map[string]any{"goal": "greet my friend"}); v.Status != "completed" {
		t.Fatalf("execute with elicitation: %+v", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(forms) != 1 || !strings.Contains(srv.Requests()[7].Messages[1].Content, "Whom should I greet?: Ada") {
		t.Fatalf("forms %d; second planning: %s", len(forms), srv.Requests()[7].Messages[1].Content)
	}
}

// TestRunCriticQuestionInTerminal: `ordo run` asks the critic's question
// on the terminal; "a TEXT" answers it and the step is tried again.
func TestRunCriticQuestionInTerminal(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, criticAsks...)
	e := newEnv(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte("hitl: {enabled: false}\nverifier: {mode: llm, threshold: 0.8}\nllm:\n  base_url: "+srv.URL+"\n  model: test-model\n"), 0o600)
	r := e.ordo("maybe\na winter\n", "--config", cfg, "run", "a haiku")
	r.want(t, 0)
	if !strings.Contains(r.stderr, "the critic asks: Which season?") || !strings.Contains(r.stdout+r.stderr, "snow on the pine") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}
