package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/memory"
)

// taskCall calls execute as a task kept ttlMS: the created task's id, or
// the JSON-RPC error refusing it.
func taskCall(t *testing.T, c *client.Client, modern bool, plan map[string]any, ttlMS int) (string, *mcp.JSONRPCErrorDetails) {
	t.Helper()
	resp := rpc(t, c, modern, "tools/call", map[string]any{"name": "execute",
		"arguments": map[string]any{"plan": plan, "options": map[string]any{"auto_approve": true}}, "task": map[string]any{"ttl": ttlMS}})
	if resp.Error != nil {
		return "", resp.Error
	}
	var created mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &created); err != nil || created.Task.TaskId == "" {
		t.Fatalf("task call result %s: %v", resp.Result, err)
	}
	return created.Task.TaskId, nil
}

// taskStatus is a task's status, as its owner sees it.
func taskStatus(t *testing.T, c *client.Client, modern bool, id string) mcp.TaskStatus {
	t.Helper()
	var got mcp.GetTaskResult
	if resp := taskRequest(t, c, modern, "tasks/get", id); resp.Error != nil || json.Unmarshal(resp.Result, &got) != nil {
		t.Fatalf("tasks/get %s: %+v %s", id, resp.Error, resp.Result)
	}
	return got.Status
}

func runningOf(t *testing.T, e *env, user string) int {
	t.Helper()
	runs, err := e.store.List(context.Background(), memory.Filter{UserID: user, Status: []contracts.RunStatus{contracts.RunRunning}})
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

// TestTasksCappedPerUser: over `serve --http`, a user with
// MaxTasksPerUser tasks running has the next task call refused with
// error 3007 and nothing started, even when many race in at once, while
// another user starts tasks as before; when one ends, the user may start
// another. mcp-go's only bound is global (WithMaxConcurrentTasks, which
// Ordo never set): one token could start tasks without end, each holding
// a run and its goroutines, or, with a global bound, take every slot.
func TestTasksCappedPerUser(t *testing.T) {
	const max = 2
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			e := newEnv(t, withMaxTasks(max))
			ts := e.httpServer(t)
			co, modern := clientOpts{legacy: era.legacy}, !era.legacy
			bob := httpClient(t, ts.URL, userToken, co)
			ada := httpClient(t, ts.URL, adminToken, co)
			open := e.closeGate()
			defer open()

			var bobs []string
			for i := range max {
				id, refused := taskCall(t, bob, modern, waitPlanFor(fmt.Sprintf("bob %d", i)), 600000)
				if refused != nil {
					t.Fatalf("bob's task %d refused under the cap: %+v", i, refused)
				}
				bobs = append(bobs, id)
			}
			testwait.Until(t, 20*time.Second, "bob's runs to start", func() bool { return runningOf(t, e, "bob") == max })

			// Past the cap: refused before a task exists, with the code.
			_, refused := taskCall(t, bob, modern, waitPlanFor("bob over"), 600000)
			if refused == nil || !strings.Contains(refused.Message, fmt.Sprintf("ordo %d:", contracts.CodeTooManyTasks)) {
				t.Fatalf("bob's task past the cap: %+v, want error %d", refused, contracts.CodeTooManyTasks)
			}

			// Another user is unaffected, including when many race in
			// at once: no more than max of hers ever run, and every one
			// past them is refused with the same code, up front or by
			// its task failing at once.
			const racing = 8
			var wg sync.WaitGroup
			var mu sync.Mutex
			var created []string
			upfront := 0
			for i := range racing {
				wg.Go(func() {
					id, refused := taskCall(t, ada, modern, waitPlanFor(fmt.Sprintf("ada %d", i)), 600000)
					mu.Lock()
					defer mu.Unlock()
					switch {
					case refused == nil:
						created = append(created, id)
					case strings.Contains(refused.Message, fmt.Sprintf("ordo %d:", contracts.CodeTooManyTasks)):
						upfront++
					default:
						t.Errorf("ada's task call: %+v", refused)
					}
				})
			}
			wg.Wait()
			if len(created) < max || upfront+len(created) != racing {
				t.Fatalf("ada: %d tasks created, %d refused up front, of %d", len(created), upfront, racing)
			}
			var working []string
			testwait.Until(t, 20*time.Second, "ada's tasks past the cap to fail", func() bool {
				working = working[:0]
				for _, id := range created {
					if st := taskStatus(t, ada, modern, id); !st.IsTerminal() {
						working = append(working, id)
					}
				}
				return len(working) <= max && runningOf(t, e, "ada") >= len(working)
			})
			if len(working) != max || runningOf(t, e, "ada") != max {
				t.Fatalf("ada: %d tasks working, %d runs running, want %d", len(working), runningOf(t, e, "ada"), max)
			}
			if era.legacy { // tasks/result of a task refused after it was created
				for _, id := range created {
					if slices.Contains(working, id) {
						continue
					}
					resp := taskRequest(t, ada, modern, "tasks/result", id)
					if resp.Error != nil || !strings.Contains(string(resp.Result), fmt.Sprintf(`\"code\":%d`, contracts.CodeTooManyTasks)) {
						t.Fatalf("result of ada's task past the cap: %+v %s", resp.Error, resp.Result)
					}
				}
			}

			// One of bob's ends: he may start another.
			if resp := taskRequest(t, bob, modern, "tasks/cancel", bobs[0]); resp.Error != nil {
				t.Fatalf("cancel: %+v", resp.Error)
			}
			if _, refused := taskCall(t, bob, modern, waitPlanFor("bob again"), 600000); refused != nil {
				t.Fatalf("bob's task after one ended: %+v", refused)
			}
		})
	}
}

// TestExpiredTaskStopsItsRun: when a task's ttl passes while its run goes
// on, mcp-go forgets the task (tasks/get: expired) and cancels the
// context it gave the call. Ordo's detached run never saw that context:
// it went on, out of reach of tasks/cancel, holding one of its user's
// task slots. Now it stops at its next step boundary, as on tasks/cancel
// (resumable with execute), and the slot comes free.
func TestExpiredTaskStopsItsRun(t *testing.T) {
	e := newEnv(t, withMaxTasks(1))
	c := e.stdioClient(t, clientOpts{legacy: true})
	open := e.closeGate()
	defer open()
	id, refused := taskCall(t, c, false, waitPlanFor("short-lived"), 300)
	if refused != nil {
		t.Fatalf("task call: %+v", refused)
	}
	runID := runOf(t, e, "short-lived")
	testwait.Until(t, 20*time.Second, "the task to expire", func() bool {
		r := taskRequest(t, c, false, "tasks/get", id)
		return r.Error != nil && strings.Contains(r.Error.Message, "expired")
	})
	open()
	if run := settled(t, e, runID); run.Error == nil || run.Error.Code != contracts.CodeCancelled {
		t.Fatalf("the expired task's run: status %s error %+v, want stopped (4005)", run.Status, run.Error)
	}
	testwait.Until(t, 20*time.Second, "the expired task's slot to come free", func() bool {
		id, refused := taskCall(t, c, false, upperPlan("next"), 600000)
		return refused == nil && id != ""
	})
}
