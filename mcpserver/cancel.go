package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// inflight lets a notifications/cancelled over HTTP reach only its
// sender's own requests. mcp-go keys a request's cancellation by session id
// and request id, and every request of protocol 2026-07-28 has the same,
// empty, session id (mcp-go ignores an Mcp-Session-Id header on them), so a
// cancellation from one user ended any other user's request that carried
// the same id — clients number theirs 1, 2, 3… — an execute, a
// subscriptions/listen stream. So the HTTP layer answers every
// notifications/cancelled itself, from this table, keyed by the caller's
// user, the Mcp-Session-Id header as sent, and the request id; mcp-go never
// sees one. (Over stdio there is one client, and mcp-go's own keying holds.)
type inflight struct {
	mu   sync.Mutex
	next int
	m    map[string]map[int]context.CancelFunc
}

func newInflight() *inflight { return &inflight{m: map[string]map[int]context.CancelFunc{}} }

func inflightKey(user, session string, id json.RawMessage) string {
	return user + "\x00" + session + "\x00" + string(bytes.TrimSpace(id))
}

// add records cancel for a request until the returned func runs.
func (t *inflight) add(user, session string, id json.RawMessage, cancel context.CancelFunc) (done func()) {
	k := inflightKey(user, session, id)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	n := t.next
	if t.m[k] == nil {
		t.m[k] = map[int]context.CancelFunc{}
	}
	t.m[k][n] = cancel
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.m[k], n)
		if len(t.m[k]) == 0 {
			delete(t.m, k)
		}
	}
}

// cancel ends the caller's in-flight requests with this id; another
// user's, and unknown ids, are left alone.
func (t *inflight) cancel(user, session string, id json.RawMessage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.m[inflightKey(user, session, id)] {
		c()
	}
}

// isCancel reports whether m is a notifications/cancelled.
func (m rpcMessage) isCancel() bool {
	return m.Method == string(mcp.MethodNotificationCancelled) && !m.isRequest()
}

// isRequest reports whether m is a request (it has an id).
func (m rpcMessage) isRequest() bool {
	return len(m.ID) > 0 && string(m.ID) != "null"
}
