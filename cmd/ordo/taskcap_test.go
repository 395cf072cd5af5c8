package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// taskExecute calls execute with plan as an MCP task: the task id, or the
// JSON-RPC error refusing the call.
func taskExecute(t *testing.T, ctx context.Context, c *client.Client, plan string) (string, *mcp.JSONRPCErrorDetails) {
	t.Helper()
	resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(int64(time.Now().UnixNano())),
		Method: "tools/call", Params: map[string]any{"name": "execute", "task": map[string]any{"ttl": 60000},
			"arguments": map[string]any{"plan": json.RawMessage(plan), "options": map[string]any{"auto_approve": true}}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		return "", resp.Error
	}
	var created mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TaskId == "" {
		t.Fatalf("task call: %s %v", resp.Result, err)
	}
	return created.Task.TaskId, nil
}

// `ordo serve --http` with mcp.max_tasks_per_user: 1: while bob's task
// waits in its step, his next task call is refused with 3007; ada starts and finishes hers as if bob were idle; once bob's
// task ends he may start another.
func TestServeCapsTasksPerUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hook, hit, unblock := blockingWebhook(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte("mcp:\n  max_tasks_per_user: 1\npolicy:\n  confirm_tools: []\nbundled:\n  chat:\n    webhook_url: "+hook.URL+"/hook\n"+
		"http:\n  tokens:\n    - {name: ada, token_env: ADA_TOKEN, role: user}\n    - {name: bob, token_env: BOB_TOKEN, role: user}\n"), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adaToken, bobToken := strings.Repeat("a", 32), strings.Repeat("b", 32)
	url := serveHTTPWith(t, ctx, e, []string{"--config", cfg}, "ADA_TOKEN="+adaToken, "BOB_TOKEN="+bobToken)
	session := func(token string) *client.Client {
		c, err := httpSession(ctx, url, token)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	bob, ada := session(bobToken), session(adaToken)

	first, refused := taskExecute(t, ctx, bob, postThenNote)
	if refused != nil {
		t.Fatalf("bob's first task: %+v", refused)
	}
	select {
	case <-hit:
	case <-ctx.Done():
		t.Fatal("bob's run never reached the chat webhook")
	}
	if _, refused := taskExecute(t, ctx, bob, postThenNote); refused == nil || !strings.Contains(refused.Message, "ordo 3007:") {
		t.Fatalf("bob's second task: %+v, want 3007", refused)
	}

	const template = `{"version":"1.0","goal":"ada's","timezone":"UTC","actions":[{"id":"a","tool":"text.template","intent":"transform","requires":[],"produces":["text"],"inputs":{"template":"hi","values":{}}}]}`
	id, refused := taskExecute(t, ctx, ada, template)
	if refused != nil {
		t.Fatalf("ada's task while bob is at his cap: %+v", refused)
	}
	if res, err := ada.WaitForTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}}, 20*time.Millisecond); err != nil || res.Status != mcp.TaskStatusCompleted {
		t.Fatalf("ada's task: %+v %v", res, err)
	}

	unblock()
	if res, err := bob.WaitForTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: first}}, 20*time.Millisecond); err != nil || res.Status != mcp.TaskStatusCompleted {
		t.Fatalf("bob's first task: %+v %v", res, err)
	}
	if _, refused := taskExecute(t, ctx, bob, template); refused != nil {
		t.Fatalf("bob's task after his first ended: %+v", refused)
	}
}
