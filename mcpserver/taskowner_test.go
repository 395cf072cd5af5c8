package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testwait"
)

// rpc sends one request as c's protocol revision wants it: on 2026-07-28
// with the client's _meta and standard headers, which mcp-go's client adds
// only in its typed methods.
func rpc(t *testing.T, c *client.Client, modern bool, method string, params map[string]any) *transport.JSONRPCResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(1000 + requestIDs.Add(1)), Method: method, Params: params}
	if modern {
		params["_meta"] = map[string]any{mcp.MetaKeyProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, mcp.MetaKeyClientCapabilities: map[string]any{}}
		encoded, _ := json.Marshal(params)
		req.Header = http.Header{}
		for name, value := range mcp.StandardHeaders(mcp.LATEST_PROTOCOL_VERSION, mcp.MCPMethod(method), encoded) {
			req.Header.Set(name, value)
		}
	}
	resp, err := c.GetTransport().SendRequest(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// taskRequest sends one tasks/* request about taskID.
func taskRequest(t *testing.T, c *client.Client, modern bool, method, taskID string) *transport.JSONRPCResponse {
	t.Helper()
	return rpc(t, c, modern, method, map[string]any{"taskId": taskID})
}

// startOwnTask calls a tool as a task and returns the task id.
func startOwnTask(t *testing.T, c *client.Client, modern bool, name string, args map[string]any) string {
	t.Helper()
	resp := rpc(t, c, modern, "tools/call", map[string]any{"name": name, "arguments": args, "task": map[string]any{"ttl": 600000}})
	var created mcp.CreateTaskResult
	if resp.Error != nil || json.Unmarshal(resp.Result, &created) != nil || created.Task.TaskId == "" {
		t.Fatalf("task call: %+v %s", resp.Error, resp.Result)
	}
	return created.Task.TaskId
}

// waitOwnTask polls tasks/get until the task is terminal.
func waitOwnTask(t *testing.T, c *client.Client, modern bool, id string) {
	t.Helper()
	testwait.Until(t, 30*time.Second, "task "+id+" to end", func() bool {
		resp := taskRequest(t, c, modern, "tasks/get", id)
		var got mcp.GetTaskResult
		if resp.Error != nil || json.Unmarshal(resp.Result, &got) != nil {
			t.Fatalf("tasks/get: %+v %s", resp.Error, resp.Result)
		}
		return got.Status.IsTerminal()
	})
}

// listedTasks returns the ids tasks/list shows c.
func listedTasks(t *testing.T, c *client.Client) []string {
	t.Helper()
	resp := rpc(t, c, false, "tasks/list", map[string]any{})
	if resp.Error != nil {
		t.Fatalf("tasks/list: %+v", resp.Error)
	}
	var out mcp.ListTasksResult
	if err := json.Unmarshal(resp.Result, &out); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, task := range out.Tasks {
		ids = append(ids, task.TaskId)
	}
	return ids
}

// TestTasksBelongToTheirUser: over HTTP, on both protocol revisions, a
// task is visible only to the user who created it — an admin included —
// through every task operation; another user gets "task not found", as
// for an id that does not exist, and cannot stop the task.
func TestTasksBelongToTheirUser(t *testing.T) {
	e := newEnv(t)
	ts := e.httpServer(t)
	auto := map[string]any{"auto_approve": true}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			co, modern := clientOpts{legacy: era.legacy}, !era.legacy
			ada := httpClient(t, ts.URL, adminToken, co)
			var mu sync.Mutex
			var heard []string // task ids in the status notifications bob gets
			bobOpts := co
			bobOpts.onNotif = func(n mcp.JSONRPCNotification) {
				if n.Method == mcp.MethodNotificationTasksStatus {
					mu.Lock()
					heard = append(heard, fmt.Sprint(n.Params.AdditionalFields["taskId"]))
					mu.Unlock()
				}
			}
			bob := httpClient(t, ts.URL, userToken, bobOpts)

			open := e.closeGate()
			defer open()
			adas := startOwnTask(t, ada, modern, "execute", map[string]any{"plan": waitPlan(), "options": auto})
			runID := runningRun(t, e)
			bobs := startOwnTask(t, bob, modern, "plan", map[string]any{"plan": upperPlan("bob's")})
			waitOwnTask(t, bob, modern, bobs)

			// Each user is a stranger to the other's task, whatever the role.
			for _, probe := range []struct {
				who   *client.Client
				name  string
				other string
			}{{bob, "bob", adas}, {ada, "ada (admin)", bobs}} {
				methods := []string{"tasks/get", "tasks/cancel"}
				if era.legacy {
					methods = append(methods, "tasks/result")
				}
				for _, m := range methods {
					resp := taskRequest(t, probe.who, modern, m, probe.other)
					if resp.Error == nil {
						t.Errorf("%s: %s of another user's task answered %s", probe.name, m, resp.Result)
						continue
					}
					unknown := taskRequest(t, probe.who, modern, m, "no-such-task")
					if unknown.Error == nil || resp.Error.Message != unknown.Error.Message || resp.Error.Code != unknown.Error.Code {
						t.Errorf("%s: %s of another user's task: %+v, of an unknown one: %+v (must not differ)", probe.name, m, resp.Error, unknown.Error)
					}
				}
				if era.legacy {
					if ids := listedTasks(t, probe.who); slices.Contains(ids, probe.other) {
						t.Errorf("%s: tasks/list shows another user's task %s: %v", probe.name, probe.other, ids)
					}
				}
			}

			// Nor with ada's session id under his own token: the session is
			// hers (TestSessionBoundToItsToken).
			if era.legacy {
				sid := ada.GetTransport().(*transport.StreamableHTTP).GetSessionId()
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":%q}}`, adas)
				if status, got := sessionRequest(t, ts.URL, userToken, sid, http.MethodPost, body); status != http.StatusNotFound || strings.Contains(got, adas) {
					t.Errorf("bob with ada's session id: tasks/get answered %d %s (the session is hers: 404)", status, got)
				}
			}

			// The run bob tried to cancel is still running.
			if run, err := e.store.Load(context.Background(), runID); err != nil || run.Status != contracts.RunRunning {
				t.Fatalf("ada's run after bob's cancel: %v %v", run, err)
			}

			// The owners see and steer their own.
			if resp := taskRequest(t, ada, modern, "tasks/get", adas); resp.Error != nil {
				t.Fatalf("ada tasks/get: %+v", resp.Error)
			}
			if era.legacy {
				if ids := listedTasks(t, bob); !slices.Contains(ids, bobs) || slices.Contains(ids, adas) {
					t.Fatalf("bob's list: %v", ids)
				}
				if ids := listedTasks(t, ada); !slices.Contains(ids, adas) || slices.Contains(ids, bobs) {
					t.Fatalf("ada's list: %v", ids)
				}
			}
			if resp := taskRequest(t, ada, modern, "tasks/cancel", adas); resp.Error != nil {
				t.Fatalf("ada tasks/cancel: %+v", resp.Error)
			}
			open()
			if run := settled(t, e, runID); run.Error == nil || run.Error.Code != contracts.CodeCancelled {
				t.Fatalf("ada's cancelled run: %+v", run)
			}
			// bob heard about his own task, never about ada's.
			waitOwnTask(t, ada, modern, adas)
			mu.Lock()
			defer mu.Unlock()
			if slices.Contains(heard, adas) {
				t.Errorf("bob was notified of ada's task: %v", heard)
			}
		})
	}
}
