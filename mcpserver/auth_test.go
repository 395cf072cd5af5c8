package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testmcp"
)

// post sends one raw JSON-RPC message to /mcp and returns the status and
// the coded error body, if any.
func post(t *testing.T, url, auth, body string) (int, contracts.Error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e contracts.Error
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e
}

func TestHTTPAuth(t *testing.T) {
	e := newEnv(t)
	ts := e.httpServer(t)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`
	addPlugin := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_plugin","arguments":{"name":"x","path":"/nonexistent"}}}`
	for _, tc := range []struct {
		name, auth, body string
		status           int
		code             contracts.Code
	}{
		{"no token", "", list, http.StatusUnauthorized, contracts.CodeUnauthorized},
		{"wrong token", "Bearer not-a-token", list, http.StatusUnauthorized, contracts.CodeUnauthorized},
		{"wrong scheme", "Basic " + userToken, list, http.StatusUnauthorized, contracts.CodeUnauthorized},
		{"admin tool without admin role", "Bearer " + userToken, addPlugin, http.StatusForbidden, contracts.CodeForbidden},
		{"admin tool in a batch", "Bearer " + userToken, "[" + list + "," + addPlugin + "]", http.StatusForbidden, contracts.CodeForbidden},
	} {
		status, body := post(t, ts.URL, tc.auth, tc.body)
		if status != tc.status || body.Code != tc.code {
			t.Errorf("%s: status %d code %d, want %d %d", tc.name, status, body.Code, tc.status, tc.code)
		}
	}
	// A valid token passes auth (mcp-go then wants a session: not 401/403).
	if status, _ := post(t, ts.URL, "Bearer "+userToken, list); status == http.StatusUnauthorized || status == http.StatusForbidden {
		t.Fatalf("valid token: status %d", status)
	}
	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()

	// A user sees no admin tools; an admin does, and may call them.
	user := httpClient(t, ts.URL, userToken, clientOpts{})
	admin := httpClient(t, ts.URL, adminToken, clientOpts{})
	if names := testmcp.ToolNames(t, user); slices.Contains(names, "add_plugin") || !slices.Contains(names, "plan") {
		t.Fatalf("user tools: %v", names)
	}
	if names := testmcp.ToolNames(t, admin); !slices.Contains(names, "add_plugin") || !slices.Contains(names, "list_plugins") {
		t.Fatalf("admin tools: %v", names)
	}
	plugins := call(t, admin, "list_plugins", map[string]any{})
	if len(plugins["plugins"].([]any)) != 1 {
		t.Fatalf("plugins: %v", plugins)
	}
	code, _ := toolError(t, admin, "add_plugin", map[string]any{"name": "ghost", "path": "/nonexistent/ordo-plugin-ghost"})
	if code/1000 != 1 && code/1000 != 6 {
		t.Fatalf("adding a missing plugin: code %d", code)
	}

	// Runs are private: bob cannot see ada's run.
	out := call(t, admin, "plan", map[string]any{"plan": upperPlan("mine")})
	if code, _ := toolError(t, user, "run_status", map[string]any{"run_id": out["run_id"]}); code != contracts.CodeRunNotFound {
		t.Fatalf("foreign run: code %d", code)
	}
	if code, _ := toolError(t, user, "list_runs", map[string]any{"user": "ada"}); code != contracts.CodeForbidden {
		t.Fatalf("foreign list: code %d", code)
	}
}

// TestLoadConcurrentSessions runs 50 HTTP sessions at once, each executing
// its own small plan, and checks every run completed with its own answer.
func TestLoadConcurrentSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	e := newEnv(t)
	ts := e.httpServer(t)
	const sessions = 50
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := httpClient(t, ts.URL, userToken, clientOpts{})
			word := fmt.Sprintf("word%02d", i)
			res, err := callRaw(c, "execute", map[string]any{"plan": upperPlan(word), "options": map[string]any{"auto_approve": true}}, nil)
			if err != nil || res.IsError {
				errs <- fmt.Errorf("session %d: %v %s", i, err, testmcp.Text(res))
				return
			}
			var view map[string]any
			data, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(data, &view)
			run, err := e.store.Load(context.Background(), view["run_id"].(string))
			if err != nil {
				errs <- err
				return
			}
			if view["status"] != "completed" || run.Goal != "shout "+word || string(run.State["upper"]) != fmt.Sprintf("%q", "WORD"+word[4:]) {
				errs <- fmt.Errorf("session %d mixed up: view %v goal %q state %s", i, view["status"], run.Goal, run.State["upper"])
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
