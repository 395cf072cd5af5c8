package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/contracts"
)

// subscriptions tracks which sessions watch which run resources and sends
// them notifications/resources/updated when a run the server drives is
// checkpointed: ordo://runs/{id} on every new checkpoint, and
// ordo://runs/{id}/mermaid when the run gets a new plan version.
//
// mcp-go v1.2.1 acknowledges resources/subscribe but keeps no state and
// sends no updates (none of its sessions implements
// server.SessionWithResourceSubscriptions), so the bookkeeping is done here
// through hooks: resources/subscribe and resources/unsubscribe (protocol
// 2025-11-25 and older), and the resource list of a subscriptions/listen
// stream (2026-07-28), which lasts as long as that stream. A session's
// subscriptions end with the session.
//
// Any URI may be subscribed, as MCP asks, but only run resources ever
// change, so only they are kept; a run is announced only to subscribers
// allowed to read it, so subscribing to another user's run id reveals
// nothing and yields nothing. What a session keeps is bounded (see
// maxSubscriptions): a client could otherwise grow the server's memory
// without end, one request at a time.
type subscriptions struct {
	s *Server

	mu        sync.Mutex
	bySession map[server.ClientSession]map[string]*watch // uri -> watch
	byRun     map[string]map[*watch]struct{}
}

// watch is one session's subscription to one URI.
type watch struct {
	sess    server.ClientSession
	id      Identity
	uri     string
	runID   string
	mermaid bool
	// seen is what the subscriber last heard of: the checkpoint for a run
	// record, the plan version count for a plan graph.
	seen int64
}

// Bounds on one session's subscriptions: at most maxSubscriptions run
// resources, each named by a URI of at most maxSubscribedURI bytes (a run
// URI is about 40). A subscription past either is acknowledged, as MCP has
// no way to refuse one, but kept by nobody and so never announced.
const (
	maxSubscriptions = 1000
	maxSubscribedURI = 256
)

func newSubscriptions(s *Server) *subscriptions {
	return &subscriptions{s: s, bySession: map[server.ClientSession]map[string]*watch{}, byRun: map[string]map[*watch]struct{}{}}
}

// hooks wire the bookkeeping into mcp-go's request handling.
func (b *subscriptions) hooks() *server.Hooks {
	h := &server.Hooks{}
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		b.add(ctx, server.ClientSessionFromContext(ctx), req.Params.URI)
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		b.remove(server.ClientSessionFromContext(ctx), req.Params.URI)
	})
	h.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
		sess := server.ClientSessionFromContext(ctx)
		for _, uri := range req.Params.Notifications.ResourceSubscriptions {
			b.add(ctx, sess, uri)
		}
	})
	// A listen stream's subscriptions end with the stream, however it ends.
	h.AddAfterSubscriptionsListen(func(ctx context.Context, _ any, _ *mcp.SubscriptionsListenRequest, _ *mcp.SubscriptionsListenResult) {
		b.drop(server.ClientSessionFromContext(ctx))
	})
	h.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any, _ error) {
		if method == mcp.MethodSubscriptionsListen {
			b.drop(server.ClientSessionFromContext(ctx))
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) { b.drop(sess) })
	return h
}

// parseRunURI says which run a URI names (its record, its event log, with
// or without a cursor) and whether it is the plan graph; ok is false for
// any other URI.
func parseRunURI(uri string) (runID string, mermaid, ok bool) {
	rest, found := strings.CutPrefix(uri, runURIPrefix)
	if !found {
		return "", false, false
	}
	path, _, query := strings.Cut(rest, "?")
	runID, events := strings.CutSuffix(path, "/events")
	if !events {
		if query {
			return "", false, false
		}
		runID, mermaid = strings.CutSuffix(rest, mermaidURISuffx)
	}
	if runID == "" || strings.Contains(runID, "/") {
		return "", false, false
	}
	return runID, mermaid, true
}

func (b *subscriptions) add(ctx context.Context, sess server.ClientSession, uri string) {
	if sess == nil {
		return
	}
	w := &watch{sess: sess, id: identityFrom(ctx), uri: uri}
	var ok bool
	if w.runID, w.mermaid, ok = parseRunURI(uri); !ok || len(uri) > maxSubscribedURI {
		return // never changes, or names no run
	}
	// Updates are relative to what the subscriber could read now.
	if run, err := b.s.opts.Engine.Get(ctx, w.runID); err == nil && w.id.mayRead(run) {
		w.seen = w.version(run)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	uris := b.bySession[sess]
	if uris == nil {
		uris = map[string]*watch{}
		b.bySession[sess] = uris
	}
	old := uris[uri]
	if old == nil && len(uris) >= maxSubscriptions {
		b.s.log.Warn("subscription not kept: the session holds the most it may", "limit", maxSubscriptions, "user", w.id.User)
		return
	}
	if old != nil {
		b.unindex(old)
	}
	uris[uri] = w
	if b.byRun[w.runID] == nil {
		b.byRun[w.runID] = map[*watch]struct{}{}
	}
	b.byRun[w.runID][w] = struct{}{}
}

func (b *subscriptions) remove(sess server.ClientSession, uri string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w := b.bySession[sess][uri]; w != nil {
		b.unindex(w)
		delete(b.bySession[sess], uri)
		if len(b.bySession[sess]) == 0 {
			delete(b.bySession, sess)
		}
	}
}

// drop ends every subscription of a session.
func (b *subscriptions) drop(sess server.ClientSession) {
	if sess == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, w := range b.bySession[sess] {
		b.unindex(w)
	}
	delete(b.bySession, sess)
}

// unindex removes w from the run index; b.mu is held.
func (b *subscriptions) unindex(w *watch) {
	delete(b.byRun[w.runID], w)
	if len(b.byRun[w.runID]) == 0 {
		delete(b.byRun, w.runID)
	}
}

// runChanged tells the run's subscribers that its record moved on. It runs
// on the engine's goroutine after a checkpoint (engine events follow their
// checkpoint), so the record a subscriber reads back is at least as new as
// the notification. Repeated calls for one checkpoint notify once.
func (b *subscriptions) runChanged(ctx context.Context, runID string) {
	b.mu.Lock()
	n := len(b.byRun[runID])
	b.mu.Unlock()
	if n == 0 {
		return
	}
	run, err := b.s.opts.Engine.Get(context.WithoutCancel(ctx), runID)
	if err != nil {
		b.s.log.Debug("subscribed run not loaded", "run", runID, "err", err)
		return
	}
	var due []*watch
	b.mu.Lock()
	for w := range b.byRun[runID] {
		if v := w.version(run); w.id.mayRead(run) && v > w.seen {
			w.seen = v
			due = append(due, w)
		}
	}
	b.mu.Unlock()
	for _, w := range due {
		b.notify(w)
	}
}

// version is what a subscriber's URI tracks of run.
func (w *watch) version(run *contracts.Run) int64 {
	if w.mermaid {
		return int64(len(run.Plans))
	}
	return run.Seq
}

// notify sends notifications/resources/updated to w's session: through
// mcp-go's routing for a registered session (stdio, HTTP with a session
// id), straight onto the stream of a subscriptions/listen session, which
// mcp-go never registers.
func (b *subscriptions) notify(w *watch) {
	params := map[string]any{"uri": w.uri}
	err := b.s.mcp.SendNotificationToSpecificClient(w.sess.SessionID(), mcp.MethodNotificationResourceUpdated, params)
	if errors.Is(err, server.ErrSessionNotFound) {
		select {
		case w.sess.NotificationChannel() <- mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
			Notification: mcp.Notification{Method: mcp.MethodNotificationResourceUpdated, Params: mcp.NotificationParams{AdditionalFields: params}}}:
			err = nil
		default:
			err = server.ErrNotificationChannelBlocked
		}
	}
	if err != nil {
		b.s.log.Debug("resource update not sent", "uri", w.uri, "err", err)
	}
}

// mayRead reports whether id may read run: its owner, or an admin.
func (id Identity) mayRead(run *contracts.Run) bool {
	return run.UserID == id.User || id.Has(RoleAdmin)
}
