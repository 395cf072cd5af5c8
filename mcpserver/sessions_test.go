package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/agent/llm/openai"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
)

// newModelEnv is the harness's stack with a model: openai-go against a
// scripted OpenAI-compatible server, and the HTTP users of newEnv.
func newModelEnv(t *testing.T, replies ...llmtest.Reply) (*env, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(t, replies...)
	m, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "test", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e, h, rec := newStack(t, agent.Config{}, nil)
	e.engine = agent.New(agent.Config{}, agent.Deps{Tools: h, Store: e.store, LLM: m, Recommender: rec})
	e.srv, err = mcpserver.New(mcpserver.Options{
		Engine: e.engine, Runs: e.store, Catalog: h, Version: "test", HasLLM: true,
		Tokens: []mcpserver.Token{
			{Token: adminToken, Identity: mcpserver.Identity{User: "ada", Roles: []string{mcpserver.RoleAdmin}}},
			{Token: userToken, Identity: mcpserver.Identity{User: "bob"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.srv.Close() })
	return e, srv
}

// plannerTurns are the conversation turns the i-th planner call was given.
func plannerTurns(t *testing.T, srv *llmtest.Server, i int) []string {
	t.Helper()
	n := 0
	for _, r := range srv.Requests() {
		if r.Role != "planner" {
			continue
		}
		if n++; n-1 != i {
			continue
		}
		var in struct {
			Conversation []struct{ Goal, Answer string } `json:"conversation"`
			Context      string                          `json:"context"`
		}
		if err := json.Unmarshal([]byte(r.Messages[len(r.Messages)-1].Content), &in); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range in.Conversation {
			out = append(out, c.Goal+" => "+c.Answer)
		}
		return out
	}
	t.Fatalf("no planner call %d", i)
	return nil
}

// Two execute calls with one session_id over HTTP: the second planner
// call sees the first turn (goal and answer); get_session and
// list_sessions show the turns. Sessions are private: bob cannot read
// ada's session, and his own session of the same name is his alone.
func TestSessionOverMCPHTTP(t *testing.T) {
	upper := `{"version":"1.0","goal":"shout hi","timezone":"UTC","actions":[
	 {"id":"a1","tool":"text.upper","intent":"transform","requires":[],"produces":["upper"],"inputs":{"text":"hi"}}]}`
	e, srv := newModelEnv(t,
		llmtest.Reply{Role: "planner", Content: upper}, llmtest.Reply{Role: "composer", Content: "HI"},
		llmtest.Reply{Role: "planner", Content: `{"version":"1.0","goal":"again","timezone":"UTC","actions":[]}`},
		llmtest.Reply{Role: "composer", Content: "You asked me to shout hi: HI."},
		llmtest.Reply{Role: "planner", Content: `{"version":"1.0","goal":"hello","timezone":"UTC","actions":[]}`},
		llmtest.Reply{Role: "composer", Content: "Hello."})
	ts := e.httpServer(t)
	ada := httpClient(t, ts.URL, adminToken, clientOpts{})
	bob := httpClient(t, ts.URL, userToken, clientOpts{})

	first := call(t, ada, "execute", map[string]any{"goal": "shout hi", "session_id": "chat", "options": map[string]any{"auto_approve": true}})
	if first["status"] != "completed" {
		t.Fatalf("first turn: %v", first)
	}
	second := call(t, ada, "execute", map[string]any{"goal": "what did I ask?", "session_id": "chat", "context": "be brief"})
	if second["status"] != "completed" || second["result"].(map[string]any)["answer"] != "You asked me to shout hi: HI." {
		t.Fatalf("second turn: %v", second)
	}
	if got := plannerTurns(t, srv, 1); len(got) != 1 || got[0] != "shout hi => HI" {
		t.Fatalf("the second planner call saw %v", got)
	}

	sess := call(t, ada, "get_session", map[string]any{"session_id": "chat"})
	turns := sess["turns"].([]any)
	if len(turns) != 2 || turns[0].(map[string]any)["run_id"] != first["run_id"] || turns[1].(map[string]any)["goal"] != "what did I ask?" {
		t.Fatalf("get_session: %v", sess)
	}
	list := call(t, ada, "list_sessions", map[string]any{})
	if list["count"] != float64(1) || list["sessions"].([]any)[0].(map[string]any)["turns"] != float64(2) {
		t.Fatalf("list_sessions: %v", list)
	}

	// bob: not ada's session, not in his list, and his own "chat" is new.
	if code, _ := toolError(t, bob, "get_session", map[string]any{"session_id": "chat"}); code != contracts.CodeRunNotFound {
		t.Fatalf("bob's get_session of ada's session: code %d", code)
	}
	if list := call(t, bob, "list_sessions", map[string]any{}); list["count"] != float64(0) {
		t.Fatalf("bob lists %v", list)
	}
	own := call(t, bob, "execute", map[string]any{"goal": "hello", "session_id": "chat"})
	if own["status"] != "completed" || len(plannerTurns(t, srv, 2)) != 0 {
		t.Fatalf("bob's turn: %v, saw %v", own, plannerTurns(t, srv, 2))
	}
	run, err := e.engine.Get(t.Context(), own["run_id"].(string))
	if err != nil || run.SessionID != "chat" || run.UserID != "bob" || len(run.Conversation) != 0 {
		t.Fatalf("bob's run: %+v, %v", run, err)
	}

	// A session or context on run_id is refused: the run has its own.
	if code, body := toolError(t, ada, "execute", map[string]any{"run_id": first["run_id"], "session_id": "chat"}); code != contracts.CodeInvalidInput ||
		!strings.Contains(body["message"].(string), "session_id") {
		t.Fatalf("session_id with run_id: %d %v", code, body)
	}
}
