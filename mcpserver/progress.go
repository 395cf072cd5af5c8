package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/agent"
)

// deliveryWait bounds how long a response waits for its notifications to
// be written; it is a guard against a stuck stream, not a pacing delay.
const deliveryWait = 5 * time.Second

// notifier turns the engine's events for one request into notifications
// on that request: notifications/progress when the caller sent a progress
// token (progress counts finished step attempts, total is the size of the
// run's current plan once it has one, the message says what happened and
// ends with the run's cursor, "(cursor N)": the log entry the event
// follows, to resume the events resource or stream from), and a log
// message per event (the event itself, its seq the cursor) for clients
// that asked for logs.
type notifier struct {
	s     *Server
	ctx   context.Context
	token mcp.ProgressToken
	// scoped: the request has its own session (protocol 2026-07-28), so
	// every notification queued on it belongs on this response.
	scoped bool
	info   *server.RequestProtocolInfo

	stdio *stdioProgress // on stdio: orders progress before the response

	mu       sync.Mutex
	done     int // finished step attempts
	queued   int // notifications queued on a scoped session
	lastSent int // on stdio: the number of this call's last progress notification
}

func (s *Server) newNotifier(ctx context.Context, req mcp.CallToolRequest) *notifier {
	n := &notifier{s: s, ctx: ctx, info: server.RequestProtocolInfoFromContext(ctx)}
	if req.Params.Meta != nil {
		n.token = req.Params.Meta.ProgressToken
	}
	n.scoped = n.info != nil && n.info.Modern && req.Params.Task == nil
	n.stdio, _ = ctx.Value(stdioProgressKey{}).(*stdioProgress)
	return n
}

// event is the job's event sink. It runs on the engine's goroutine, so
// every notification of the call is queued before the call returns.
func (n *notifier) event(ev agent.Event) {
	n.s.runWatch.wake(ev.RunID) // event streams following the run read on
	if n.ctx.Err() != nil {
		return // the client cancelled the request: it hears no more of it
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch ev.Kind {
	case agent.EventStepSucceeded, agent.EventStepFailed, agent.EventStepSkipped:
		n.done++
	}
	if n.token != nil {
		params := map[string]any{"progressToken": n.token, "progress": n.done, "message": describeEvent(ev)}
		if ev.Actions > 0 {
			params["total"] = ev.Actions
		}
		send := func() error {
			return n.s.mcp.SendNotificationToClient(n.ctx, string(mcp.MethodNotificationProgress), params)
		}
		var err error
		if n.stdio != nil {
			var num int
			if num, err = n.stdio.queue(send); err == nil {
				n.lastSent = num
			}
		} else {
			err = send()
		}
		if err != nil {
			n.s.log.Debug("progress notification not sent", "run", ev.RunID, "err", err)
		} else {
			n.queued++
		}
	}
	level := mcp.LoggingLevelInfo
	if ev.Kind == agent.EventStepFailed || ev.Kind == agent.EventFailed {
		level = mcp.LoggingLevelWarning
	}
	// On a scoped request mcp-go queues a log message only when the request
	// declared a level that admits it (SEP-2575).
	err := n.s.mcp.SendLogMessageToClient(n.ctx, mcp.NewLoggingMessageNotification(level, "ordo", ev))
	if err == nil && n.scoped && n.info.LogLevel != "" && level.ShouldSendTo(n.info.LogLevel) {
		n.queued++
	}
}

// delivered waits until this request's queued notifications are written
// to its HTTP response. mcp-go's streamable HTTP server hands a POST's
// notifications to a forwarder goroutine; when the handler returns, a
// notification that forwarder has already taken from the queue but not yet
// written is dropped (server/streamable_http.go, the forwarder's "done"
// check), so returning first would lose it. Only a scoped session has this
// response as its sole reader; older HTTP sessions need no wait. On stdio
// the wait keeps progress ahead of the response (see stdioProgress).
func (n *notifier) delivered() {
	n.mu.Lock()
	queued, lastSent := n.queued, n.lastSent
	n.mu.Unlock()
	var written *counter
	want := queued
	if sse, ok := n.ctx.Value(sseCounterKey{}).(*sseCounter); ok && n.scoped {
		written = sse.written
	} else if n.stdio != nil {
		written, want = n.stdio.written, lastSent
	}
	if written == nil || want == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(n.ctx, deliveryWait)
	defer cancel()
	if !written.waitFor(ctx, want) {
		n.s.log.Warn("notifications not written before the response", "queued", want, "err", ctx.Err())
	}
}

func describeEvent(ev agent.Event) string {
	parts := []string{ev.Kind}
	if ev.ActionID != "" {
		parts = append(parts, ev.ActionID)
	}
	if ev.Tool != "" {
		parts = append(parts, "("+ev.Tool+")")
	}
	if ev.Message != "" {
		parts = append(parts, "- "+ev.Message)
	}
	// The cursor is the run's log entry the event follows: read the events
	// resource or stream after it to pick the run up from here.
	return fmt.Sprintf("run %s: %s (cursor %d)", ev.RunID, strings.Join(parts, " "), ev.Seq)
}
