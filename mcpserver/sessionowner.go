package mcpserver

import (
	"sync"
	"time"
)

// sessionOwners binds each MCP session id (the Mcp-Session-Id of the
// revisions before 2026-07-28) to the user whose token first used it:
// mcp-go takes any well-formed id, and with one a request reaches that
// session's state — its stream, where elicitation and sampling requests
// go and are answered, its subscriptions, its DELETE. Bound, the id is
// worth nothing under another user's token. Ids unused for sessionOwnerTTL
// are forgotten as new ones come, so the table does not grow for ever.
type sessionOwners struct {
	mu    sync.Mutex
	m     map[string]*sessionOwner
	swept time.Time // the last sweep of unused ids
	now   func() time.Time
}

type sessionOwner struct {
	user string
	seen time.Time
}

// sessionOwnerTTL is how long an unused session stays bound; clients
// re-initialize after far shorter breaks.
const sessionOwnerTTL = 24 * time.Hour

func newSessionOwners() *sessionOwners {
	return &sessionOwners{m: map[string]*sessionOwner{}, now: time.Now}
}

// claim binds id to user if it is unbound, and reports whether user owns it.
func (o *sessionOwners) claim(id, user string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	if s := o.m[id]; s != nil && now.Sub(s.seen) <= sessionOwnerTTL {
		if s.user != user {
			return false
		}
		s.seen = now
		return true
	}
	if now.Sub(o.swept) > time.Hour {
		o.swept = now
		for k, s := range o.m {
			if now.Sub(s.seen) > sessionOwnerTTL {
				delete(o.m, k)
			}
		}
	}
	o.m[id] = &sessionOwner{user: user, seen: now}
	return true
}

// end forgets id (its owner ended it with DELETE).
func (o *sessionOwners) end(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, id)
}
