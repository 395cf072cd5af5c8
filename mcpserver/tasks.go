package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
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
//
// A task belongs to the user who created it. mcp-go isolates tasks by
// session only, and a 2026-07-28 task has no session, so every task
// operation is checked against the owner here (see guard).
type tasks struct {
	mu      sync.Mutex
	pending map[string][]string // session + "\x00" + tool -> task ids not yet claimed
	cancels map[string]context.CancelFunc
	early   map[string]bool // cancelled before their handler claimed them
	owners  map[string]owner
}

// owner is who created a task, and when the task ended (zero while it runs).
type owner struct {
	user  string
	ended time.Time
}

// ownerMemory is how long an ended task's owner is remembered. A task that
// mcp-go kept longer would then be shown to nobody: fail closed.
const ownerMemory = 24 * time.Hour

// maxTaskTTL bounds how long mcp-go keeps a task and its result: a task
// created without a TTL (or with none worth the name) was kept for the
// life of the process, so a client creating tasks grew the server's memory
// without end, and a longer one would outlive its owner's memory (above).
const maxTaskTTL = ownerMemory

type taskSlotKey struct{}

// taskSlot carries one request's task id from the task-created hook to
// the tool handler.
type taskSlot struct {
	mu sync.Mutex
	id string
}

func newTasks() *tasks {
	return &tasks{pending: map[string][]string{}, cancels: map[string]context.CancelFunc{}, early: map[string]bool{}, owners: map[string]owner{}}
}

func (t *tasks) hooks() *server.TaskHooks {
	h := &server.TaskHooks{}
	h.AddOnTaskCreated(func(ctx context.Context, m server.TaskMetrics) {
		t.own(m.TaskID, identityFrom(ctx).User)
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
	h.AddOnTaskCancelled(func(_ context.Context, m server.TaskMetrics) {
		t.cancel(m.TaskID)
		t.ended(m.TaskID)
	})
	h.AddOnTaskCompleted(func(_ context.Context, m server.TaskMetrics) { t.ended(m.TaskID) })
	h.AddOnTaskFailed(func(_ context.Context, m server.TaskMetrics) { t.ended(m.TaskID) })
	return h
}

// guard adds the ownership check to every task operation: a task that is
// not the caller's is made indistinguishable from one that does not exist
// (its id is replaced by one mcp-go never issues, so mcp-go answers "task
// not found"), and tasks/list shows only the caller's tasks. Admins are no
// exception: a task carries its creator's run and results.
// A task's TTL is bounded by maxTaskTTL here too.
func (t *tasks) guard(h *server.Hooks) {
	h.AddBeforeCallTool(func(_ context.Context, _ any, r *mcp.CallToolRequest) {
		if task := r.Params.Task; task != nil && (task.TTL == nil || *task.TTL <= 0 || *task.TTL > maxTaskTTL.Milliseconds()) {
			ttl := maxTaskTTL.Milliseconds()
			task.TTL = &ttl
		}
	})
	h.AddBeforeGetTask(func(ctx context.Context, _ any, r *mcp.GetTaskRequest) { t.hide(ctx, &r.Params.TaskId) })
	h.AddBeforeTaskResult(func(ctx context.Context, _ any, r *mcp.TaskResultRequest) { t.hide(ctx, &r.Params.TaskId) })
	h.AddBeforeCancelTask(func(ctx context.Context, _ any, r *mcp.CancelTaskRequest) { t.hide(ctx, &r.Params.TaskId) })
	h.AddAfterListTasks(func(ctx context.Context, _ any, _ *mcp.ListTasksRequest, r *mcp.ListTasksResult) {
		if r != nil {
			r.Tasks = slices.DeleteFunc(r.Tasks, func(task mcp.Task) bool { return !t.isOwner(ctx, task.TaskId) })
		}
	})
}

func (t *tasks) own(id, user string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	for k, o := range t.owners {
		if !o.ended.IsZero() && now.Sub(o.ended) > ownerMemory {
			delete(t.owners, k)
		}
	}
	t.owners[id] = owner{user: user}
}

func (t *tasks) ended(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if o, ok := t.owners[id]; ok && o.ended.IsZero() {
		o.ended = time.Now()
		t.owners[id] = o
	}
}

func (t *tasks) isOwner(ctx context.Context, id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	o, ok := t.owners[id]
	return ok && o.user == identityFrom(ctx).User
}

// hide replaces a task id the caller does not own with the empty id, which
// names no task.
func (t *tasks) hide(ctx context.Context, id *string) {
	if !t.isOwner(ctx, *id) {
		*id = ""
	}
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

// statusFilter wraps an HTTP response stream so that the task status
// notifications mcp-go broadcasts to every session reach only the task's
// owner. mcp-go writes each SSE event with one Write.
type statusFilter struct {
	http.ResponseWriter
	flusher http.Flusher
	ctx     context.Context
	tasks   *tasks
}

var (
	sseMessagePrefix = []byte("event: message\ndata: ")
	taskStatusMethod = []byte(`"` + mcp.MethodNotificationTasksStatus + `"`)
)

func (f *statusFilter) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, sseMessagePrefix) && bytes.Contains(p, taskStatusMethod) {
		var note struct {
			Method string `json:"method"`
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		data := bytes.TrimSpace(p[len(sseMessagePrefix):])
		if json.Unmarshal(data, &note) == nil && note.Method == mcp.MethodNotificationTasksStatus && !f.tasks.isOwner(f.ctx, note.Params.TaskID) {
			return len(p), nil
		}
	}
	return f.ResponseWriter.Write(p)
}

func (f *statusFilter) Flush() { f.flusher.Flush() }

// Unwrap lets http.ResponseController reach the connection.
func (f *statusFilter) Unwrap() http.ResponseWriter { return f.ResponseWriter }
