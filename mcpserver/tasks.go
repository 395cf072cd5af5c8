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

	"github.com/ordo-run/ordo/contracts"
)

// tasks binds MCP tasks to the runs they drive.
//
// mcp-go runs a task-augmented tool call with a context derived from the
// request, which ends as soon as the task is created; tasks/cancel cancels
// that same context. So a task's work runs detached, and a cancellation
// reaches it through the task-cancelled hook, by task id. The handler
// learns its task id from the task-created hook, through the one value
// mcp-go puts in each request's context on every transport, its
// *server.RequestProtocolInfo: the hook and the handler see the same
// pointer, and no other request does. (Over stdio, where every request
// shares one context, ids were matched to handlers in creation order per
// tool, so concurrent calls of a tool could swap their cancellations, and
// a call whose handler never took its id shifted every later one.)
//
// A task belongs to the user who created it. mcp-go isolates tasks by
// session only, and a 2026-07-28 task has no session, so every task
// operation is checked against the owner here (see guard). A user has at
// most max tasks running (see admit).
type tasks struct {
	mu        sync.Mutex
	max       int                                   // running tasks per user
	byID      map[string]*task                      // running, and ended within ownerMemory
	unclaimed map[*server.RequestProtocolInfo]*task // created, its handler has not taken it yet
	running   map[string]int                        // per user
}

// task is one MCP task: who created it and when, how to stop its work,
// and when it ended (zero while it runs).
type task struct {
	user      string
	created   time.Time
	stop      context.CancelFunc // set while its handler runs detached
	cancelled bool               // tasks/cancel came before its handler took it
	refused   bool               // created past the user's cap: its handler fails it
	ended     time.Time
}

// ownerMemory is how long an ended task's owner is remembered. A task that
// mcp-go kept longer would then be shown to nobody: fail closed.
const ownerMemory = 24 * time.Hour

// maxTaskTTL bounds how long mcp-go keeps a task and its result: a task
// created without a TTL (or with none worth the name) was kept for the
// life of the process, so a client creating tasks grew the server's memory
// without end, and a longer one would outlive its owner's memory (above).
const maxTaskTTL = ownerMemory

// DefaultMaxTasksPerUser is how many tasks one user may have running when
// Options.MaxTasksPerUser is not set.
const DefaultMaxTasksPerUser = 16

func newTasks(max int) *tasks {
	return &tasks{max: max, byID: map[string]*task{}, unclaimed: map[*server.RequestProtocolInfo]*task{}, running: map[string]int{}}
}

func (t *tasks) hooks() *server.TaskHooks {
	h := &server.TaskHooks{}
	h.AddOnTaskCreated(func(ctx context.Context, m server.TaskMetrics) {
		t.created(m.TaskID, identityFrom(ctx).User, server.RequestProtocolInfoFromContext(ctx), m.CreatedAt)
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
// A task's TTL is bounded by maxTaskTTL here too, and a task call past
// the caller's cap is refused (admit).
func (t *tasks) guard(h *server.Hooks) {
	h.AddOnRequestInitialization(t.admit)
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

// admit refuses a task-augmented tools/call from a user who already has
// max tasks running, before mcp-go creates the task: one user cannot hold
// every goroutine, run and plugin call the server has, nor pile up tasks
// without end. A call that races past this check with others of the same
// user is caught when its task is created (created) and fails at once
// with the same error, so no more than max ever run.
func (t *tasks) admit(ctx context.Context, _ any, message any) error {
	user := identityFrom(ctx).User
	t.mu.Lock()
	full := t.running[user] >= t.max
	t.mu.Unlock()
	raw, ok := message.(json.RawMessage)
	if !full || !ok {
		return nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Task json.RawMessage `json:"task"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Method != string(mcp.MethodToolsCall) || len(m.Params.Task) == 0 || string(m.Params.Task) == "null" {
		return nil
	}
	return t.tooMany(user)
}

func (t *tasks) tooMany(user string) error {
	return contracts.Errorf(contracts.CodeTooManyTasks, "you already have %d tasks running, the most one user may (mcp.max_tasks_per_user): "+
		"wait for one to end, or cancel one with tasks/cancel, before starting more", t.max).With("user", user).With("limit", t.max)
}

// created records a new task, its owner and the request that made it.
func (t *tasks) created(id, user string, req *server.RequestProtocolInfo, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	for k, old := range t.byID {
		if !old.ended.IsZero() && now.Sub(old.ended) > ownerMemory {
			delete(t.byID, k)
		}
	}
	t.running[user]++
	tk := &task{user: user, created: at, refused: t.running[user] > t.max}
	t.byID[id] = tk
	if req != nil {
		t.unclaimed[req] = tk
	}
}

func (t *tasks) ended(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk, ok := t.byID[id]
	if !ok || !tk.ended.IsZero() {
		return
	}
	tk.ended = time.Now()
	if t.running[tk.user]--; t.running[tk.user] <= 0 {
		delete(t.running, tk.user)
	}
}

func (t *tasks) isOwner(ctx context.Context, id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk, ok := t.byID[id]
	return ok && tk.user == identityFrom(ctx).User
}

// hide replaces a task id the caller does not own with the empty id, which
// names no task.
func (t *tasks) hide(ctx context.Context, id *string) {
	if !t.isOwner(ctx, *id) {
		*id = ""
	}
}

// detach returns the context a task's work runs under: it survives the
// request and ends when the task is cancelled, when its ttl passes (mcp-go
// then forgets the task and cancels the context it gave the call, which
// the detached work would not see), or when release is called.
// Every task call's handler calls it first (wrap), so each task is taken
// by exactly its own handler, even one cancelled before its handler ran.
// A task created past its user's cap is refused here.
func (t *tasks) detach(ctx context.Context, ttl time.Duration) (context.Context, func(), error) {
	dctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	req := server.RequestProtocolInfoFromContext(ctx)
	t.mu.Lock()
	defer t.mu.Unlock()
	tk := t.unclaimed[req]
	expires := time.Now().Add(ttl)
	if tk != nil {
		delete(t.unclaimed, req)
		expires = tk.created.Add(ttl) // when mcp-go forgets it
	}
	expire := time.AfterFunc(time.Until(expires), stop)
	release := func() {
		expire.Stop()
		stop()
	}
	switch {
	case tk == nil:
		return dctx, release, nil
	case tk.refused:
		release()
		return nil, nil, t.tooMany(tk.user)
	case tk.cancelled:
		stop()
	default:
		tk.stop = stop
	}
	return dctx, func() {
		t.mu.Lock()
		tk.stop = nil
		t.mu.Unlock()
		release()
	}, nil
}

func (t *tasks) cancel(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk, ok := t.byID[id]
	if !ok {
		return
	}
	tk.cancelled = true
	if tk.stop != nil {
		tk.stop()
		tk.stop = nil
	}
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
