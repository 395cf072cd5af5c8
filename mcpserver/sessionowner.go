package mcpserver

import (
	"sync"
	"time"
)

// sessionOwners binds each MCP session id (the Mcp-Session-Id of the
// revisions before 2026-07-28) that initialize opened to the user whose
// token opened it: mcp-go takes any well-formed id, and with one a request
// reaches that session's state — its stream, where elicitation and
// sampling requests go and are answered, its subscriptions, its DELETE.
// Bound, the id is worth nothing under another user's token. Only the ids
// this server handed out are kept (an id a client makes up has no state
// to reach, and keeping it would let a client grow the table at will);
// one unused for sessionOwnerTTL, with no request in flight, is forgotten.
type sessionOwners struct {
	mu    sync.Mutex
	m     map[string]*sessionOwner
	swept time.Time // the last sweep of unused ids
	now   func() time.Time
}

type sessionOwner struct {
	user    string
	seen    time.Time // the last request's start or end
	active  int       // requests in flight (a GET stream lasts)
	dropped bool      // mcp-go dropped the session (unused for sessionIdleTTL)
}

// sessionOwnerTTL is how long an unused session stays bound; clients
// re-initialize after far shorter breaks.
const sessionOwnerTTL = 24 * time.Hour

func newSessionOwners() *sessionOwners {
	return &sessionOwners{m: map[string]*sessionOwner{}, now: time.Now}
}

// opened binds id, which initialize just handed to user.
func (o *sessionOwners) opened(id, user string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	if now.Sub(o.swept) > time.Hour {
		o.swept = now
		for k, s := range o.m {
			if s.active == 0 && now.Sub(s.seen) > sessionOwnerTTL {
				delete(o.m, k)
			}
		}
	}
	o.m[id] = &sessionOwner{user: user, seen: now}
}

// enter starts a request of user's on session id; false when the session
// is another user's, or was dropped (mcp-go would serve the id with a new,
// empty session, and its client would never learn that its subscriptions
// ended). Every true is followed by leave.
func (o *sessionOwners) enter(id, user string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.m[id]
	if s == nil {
		return true
	}
	if s.user != user || s.dropped {
		return false
	}
	s.active++
	s.seen = o.now()
	return true
}

// leave ends a request enter let in.
func (o *sessionOwners) leave(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s := o.m[id]; s != nil && s.active > 0 {
		s.active--
		s.seen = o.now()
	}
}

// drop marks id's session dropped by mcp-go; its binding stays until
// forgotten, so the id stays refused.
func (o *sessionOwners) drop(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s := o.m[id]; s != nil {
		s.dropped = true
	}
}

// end forgets id (its owner ended it with DELETE).
func (o *sessionOwners) end(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, id)
}
