package mcpserver

import (
	"context"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// tasks binds MCP tasks to the runs they drive.
//
// mcp-go runs a task-augmented tool call with a context derived from the
// request, which ends as soon as the task is created; tasks/cancel cancels
// that same context. So a task's work runs detached, and a cancellation
// reaches it through the task-cancelled hook, by task id. The handler
// learns its task id from the task-created hook: exactly, through a slot
// the HTTP layer puts in each request's context, or, over stdio (one
// context for all requests), in creation order per session and tool.
type tasks struct {
	mu      sync.Mutex
	pending map[string][]string // session + "\x00" + tool -> task ids not yet claimed
	cancels map[string]context.CancelFunc
	early   map[string]bool // cancelled before their handler claimed them
}

type taskSlotKey struct{}

// taskSlot carries one request's task id from the task-created hook to
// the tool handler.
type taskSlot struct {
	mu sync.Mutex
	id string
}

func newTasks() *tasks {
	return &tasks{pending: map[string][]string{}, cancels: map[string]context.CancelFunc{}, early: map[string]bool{}}
}

func (t *tasks) hooks() *server.TaskHooks {
	h := &server.TaskHooks{}
	h.AddOnTaskCreated(func(ctx context.Context, m server.TaskMetrics) {
		if slot, ok := ctx.Value(taskSlotKey{}).(*taskSlot); ok {
			slot.mu.Lock()
			slot.id = m.TaskID
			slot.mu.Unlock()
			return
		}
		t.mu.Lock()
		k := m.SessionID + "\x00" + m.ToolName
		t.pending[k] = append(t.pending[k], m.TaskID)
		t.mu.Unlock()
	})
	h.AddOnTaskCancelled(func(_ context.Context, m server.TaskMetrics) { t.cancel(m.TaskID) })
	return h
}

// detach returns the context a task's work runs under: it survives the
// request and ends when the task is cancelled (or release is called).
func (t *tasks) detach(ctx context.Context, tool string) (context.Context, func()) {
	id := ""
	if slot, ok := ctx.Value(taskSlotKey{}).(*taskSlot); ok {
		slot.mu.Lock()
		id = slot.id
		slot.mu.Unlock()
	} else if sess := server.ClientSessionFromContext(ctx); sess != nil {
		k := sess.SessionID() + "\x00" + tool
		t.mu.Lock()
		if q := t.pending[k]; len(q) > 0 {
			id, t.pending[k] = q[0], q[1:]
			if len(t.pending[k]) == 0 {
				delete(t.pending, k)
			}
		}
		t.mu.Unlock()
	}
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if id == "" {
		return dctx, cancel
	}
	t.mu.Lock()
	if t.early[id] {
		delete(t.early, id)
		cancel()
	} else {
		t.cancels[id] = cancel
	}
	t.mu.Unlock()
	return dctx, func() {
		t.mu.Lock()
		delete(t.cancels, id)
		t.mu.Unlock()
		cancel()
	}
}

func (t *tasks) cancel(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.cancels[id]; ok {
		c()
		delete(t.cancels, id)
		return
	}
	t.early[id] = true
}
