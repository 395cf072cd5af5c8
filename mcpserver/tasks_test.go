package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/memory"
)

var requestIDs atomic.Int64

// startTask calls a tool as an MCP task and returns the task id.
func startTask(t *testing.T, c *client.Client, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(1000 + requestIDs.Add(1)), Method: "tools/call",
		Params: map[string]any{"name": name, "arguments": args, "task": map[string]any{"ttl": 600000}},
	})
	if err != nil || resp.Error != nil {
		t.Fatalf("task call: %v %+v", err, resp.Error)
	}
	var created mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TaskId == "" {
		t.Fatalf("task call result %s: %v", resp.Result, err)
	}
	return created.Task.TaskId
}

func waitTask(t *testing.T, c *client.Client, id string) *mcp.GetTaskResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.WaitForTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}}, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// waitPlan blocks in test.wait until the env's gate opens, then uppercases.
func waitPlan() map[string]any {
	return map[string]any{
		"version": "1.0", "goal": "wait then shout", "timezone": "UTC",
		"actions": []any{
			map[string]any{"id": "a1", "tool": "test.wait", "intent": "other", "requires": []any{}, "produces": []any{"waited"}, "inputs": map[string]any{"label": "first"}},
			map[string]any{"id": "a2", "tool": "text.upper", "intent": "transform", "requires": []any{"waited"}, "produces": []any{"upper"}, "input_bindings": map[string]any{"text": "waited"}},
		},
	}
}

func TestTasksPolledAndCancelled(t *testing.T) {
	e := newEnv(t)
	auto := map[string]any{"auto_approve": true}
	transports(t, e, clientOpts{legacy: true}, func(t *testing.T, c *client.Client) {
		// Polled to completion.
		id := startTask(t, c, "execute", map[string]any{"plan": upperPlan("task"), "options": auto})
		if st := waitTask(t, c, id); st.Status != mcp.TaskStatusCompleted {
			t.Fatalf("task status %s: %s", st.Status, st.StatusMessage)
		}
		ctx := context.Background()
		res, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}})
		if err != nil || res.IsError {
			t.Fatalf("task result: %v %+v", err, res)
		}
		data, _ := json.Marshal(res.StructuredContent)
		var view map[string]any
		_ = json.Unmarshal(data, &view)
		if view["status"] != "completed" {
			t.Fatalf("task result %s", data)
		}

		// Cancelled while its first step waits: the run stops at the next
		// step boundary, keeps its record, and can be executed again.
		open := e.closeGate()
		defer open()
		id = startTask(t, c, "execute", map[string]any{"plan": waitPlan(), "options": auto})
		runID := runningRun(t, e)
		if _, err := c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: id}}); err != nil {
			t.Fatal(err)
		}
		if st := waitTask(t, c, id); st.Status != mcp.TaskStatusCancelled {
			t.Fatalf("cancelled task status %s", st.Status)
		}
		open() // the step in flight finishes; a2 must not start
		run := settled(t, e, runID)
		if run.Status != contracts.RunReady || run.Error == nil || run.Error.Code != contracts.CodeCancelled {
			t.Fatalf("cancelled run: status %s error %+v", run.Status, run.Error)
		}
		for _, st := range run.Steps {
			if st.ActionID == "a2" {
				t.Fatalf("a2 ran after the cancel: %+v", run.Steps)
			}
		}
		done := call(t, c, "execute", map[string]any{"run_id": runID})
		if done["status"] != "completed" {
			t.Fatalf("execute after cancel: %v", done)
		}
	})
}

// runningRun waits until exactly one run is running and returns its id.
func runningRun(t *testing.T, e *env) string {
	t.Helper()
	var id string
	testwait.Until(t, 20*time.Second, "a run to start", func() bool {
		runs, err := e.store.List(context.Background(), memory.Filter{Status: []contracts.RunStatus{contracts.RunRunning}})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 {
			id = runs[0].ID
		}
		return id != ""
	})
	return id
}

// settled waits until the run is no longer running.
func settled(t *testing.T, e *env, id string) *contracts.Run {
	t.Helper()
	var run *contracts.Run
	testwait.Until(t, 20*time.Second, "run "+id+" to settle", func() bool {
		var err error
		if run, err = e.store.Load(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return run.Status != contracts.RunRunning
	})
	return run
}

func TestProgressNotifications(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	var got []map[string]any
	co := clientOpts{onNotif: func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			mu.Lock()
			got = append(got, n.Params.AdditionalFields)
			mu.Unlock()
		}
	}}
	transports(t, e, co, func(t *testing.T, c *client.Client) {
		mu.Lock()
		got = nil
		mu.Unlock()
		token := "progress-" + t.Name()
		// Two steps policy allows: auto_approve never answers a policy
		// confirmation (TestCallerAutoApproveLeavesPolicyToThePerson).
		plan := upperPlan("p")
		plan["actions"] = append(plan["actions"].([]any), map[string]any{"id": "a2", "tool": "text.upper", "intent": "transform",
			"requires": []any{"upper"}, "produces": []any{}, "input_bindings": map[string]any{"text": "upper"}})
		res, err := callRaw(c, "execute", map[string]any{"plan": plan, "options": map[string]any{"auto_approve": true}},
			&mcp.Meta{ProgressToken: token})
		if err != nil || res.IsError {
			t.Fatalf("execute: %v %s", err, testmcp.Text(res))
		}
		// Over HTTP the notifications precede the response on its stream;
		// stdio writes them from its own goroutine, so let them land.
		waitCompleted(t, func() string {
			mu.Lock()
			defer mu.Unlock()
			if len(got) == 0 {
				return ""
			}
			return got[len(got)-1]["message"].(string)
		})
		mu.Lock()
		defer mu.Unlock()
		// Every engine event of the run, in order: started, planned, two
		// policy decisions, each step's start and end, completed.
		want := []string{"run_started", "plan_ready", "policy_decided a1", "policy_decided a2",
			"step_started a1", "step_succeeded a1", "step_started a2", "step_succeeded a2", "completed"}
		wantProgress := []float64{0, 0, 0, 0, 0, 1, 1, 2, 2}
		if len(got) != len(want) {
			t.Fatalf("got %d progress notifications, want %d: %v", len(got), len(want), got)
		}
		for i, p := range got {
			msg, _ := p["message"].(string)
			if p["progressToken"] != token || p["progress"] != wantProgress[i] || !strings.Contains(msg, ": "+want[i]) {
				t.Fatalf("notification %d = %v, want %q with progress %v", i, p, want[i], wantProgress[i])
			}
		}
	})
}

// TestTaskTTLIsBounded: a task created without a TTL, or with one past a
// day, is kept a day at most (mcp-go kept one without a TTL, and its
// result, for the life of the process: a client creating tasks grew the
// server without end); a shorter TTL is the client's.
func TestTaskTTLIsBounded(t *testing.T) {
	e := newEnv(t)
	auto := map[string]any{"auto_approve": true}
	c := e.stdioClient(t, clientOpts{legacy: true})
	const day = int64(24 * time.Hour / time.Millisecond)
	for _, tc := range []struct {
		task map[string]any
		want int64
	}{{map[string]any{}, day}, {map[string]any{"ttl": 0}, day}, {map[string]any{"ttl": 10 * day}, day}, {map[string]any{"ttl": 60000}, 60000}} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(1000 + requestIDs.Add(1)), Method: "tools/call",
			Params: map[string]any{"name": "execute", "arguments": map[string]any{"plan": upperPlan("ttl"), "options": auto}, "task": tc.task},
		})
		cancel()
		if err != nil || resp.Error != nil {
			t.Fatalf("task call: %v %+v", err, resp.Error)
		}
		var created mcp.CreateTaskResult
		if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TTL == nil || *created.Task.TTL != tc.want {
			t.Fatalf("task %v: created %s, want ttl %d", tc.task, resp.Result, tc.want)
		}
		waitTask(t, c, created.Task.TaskId)
	}
}

// TestStdioServesCallsBesideLongOnes: over stdio, calls that wait (a step
// in flight, a slow tool) do not hold up the others: mcp-go serves stdio
// tool calls with 5 workers by default, so with five executes waiting a
// sixth call, even the cancel_run or run_status that would settle them,
// waited for one to end.
func TestStdioServesCallsBesideLongOnes(t *testing.T) {
	e := newEnv(t)
	c := e.stdioClient(t, clientOpts{})
	open := e.closeGate()
	defer open()
	const waiting = 8
	done := make(chan error, waiting)
	for range waiting {
		go func() {
			_, err := callRaw(c, "execute", map[string]any{"plan": waitPlan(), "options": map[string]any{"auto_approve": true}}, nil)
			done <- err
		}()
	}
	var running []memory.RunSummary
	testwait.Until(t, 20*time.Second, fmt.Sprintf("%d runs waiting in their step at once", waiting), func() bool {
		running, _ = e.store.List(context.Background(), memory.Filter{Status: []contracts.RunStatus{contracts.RunRunning}})
		return len(running) == waiting
	})
	if out := call(t, c, "cancel_run", map[string]any{"run_id": running[0].ID}); out["run_id"] != running[0].ID {
		t.Fatalf("cancel_run: %v", out)
	}
	open()
	for range waiting {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
