package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/memory"
)

// runOf waits for the run whose goal is goal and returns its id.
func runOf(t *testing.T, e *env, goal string) string {
	t.Helper()
	var id string
	testwait.Until(t, 20*time.Second, "the run of "+goal, func() bool {
		runs, err := e.store.List(context.Background(), memory.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Goal == goal {
				id = r.ID
			}
		}
		return id != ""
	})
	return id
}

// waitPlanFor is waitPlan with its own goal, to tell runs apart.
func waitPlanFor(goal string) map[string]any {
	p := waitPlan()
	p["goal"] = goal
	return p
}

// TestStdioTaskCancelReachesItsOwnRun: over stdio a task id is bound to
// exactly the call that created it. Ordo matched ids to handlers in
// creation order per tool, so a task call whose handler never took its id
// (its arguments were refused) left that id queued, and each later task
// call of the tool took the id before its own: tasks/cancel of one task
// stopped another's run, or nothing.
func TestStdioTaskCancelReachesItsOwnRun(t *testing.T) {
	e := newEnv(t)
	c := e.stdioClient(t, clientOpts{legacy: true})
	auto := map[string]any{"auto_approve": true}

	refused := startTask(t, c, "execute", map[string]any{"plan": "not a plan"})
	if st := waitTask(t, c, refused); !st.Status.IsTerminal() {
		t.Fatalf("refused task: %s", st.Status)
	}

	open := e.closeGate()
	defer open()
	first := startTask(t, c, "execute", map[string]any{"plan": waitPlanFor("first"), "options": auto})
	firstRun := runOf(t, e, "first")
	second := startTask(t, c, "execute", map[string]any{"plan": waitPlanFor("second"), "options": auto})
	secondRun := runOf(t, e, "second")

	if _, err := c.CancelTask(context.Background(), mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: first}}); err != nil {
		t.Fatal(err)
	}
	open()
	if run := settled(t, e, firstRun); run.Error == nil || run.Error.Code != contracts.CodeCancelled {
		t.Errorf("the cancelled task's run: status %s error %+v, want cancelled", run.Status, run.Error)
	}
	if st := waitTask(t, c, second); st.Status != mcp.TaskStatusCompleted {
		t.Errorf("the other task: %s %s", st.Status, st.StatusMessage)
	}
	if run := settled(t, e, secondRun); run.Status != contracts.RunCompleted {
		t.Errorf("the other task's run: status %s error %+v, want completed", run.Status, run.Error)
	}
}
