package webui

import (
	"net/http"
	"strings"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory"
)

// Conversations (the engine's sessions: runs started with a session id)
// are called sessions on the pages, as in list_sessions and `ordo
// sessions`; in this package "session" is a sign-in. A user sees only
// their own; an admin sees everyone's, each with its user.

// conversationsShown bounds the sessions list; conversationTurns bounds
// the turns read to build it (agent.ListSessions reads as many).
const (
	conversationsShown = 100
	conversationTurns  = 1000
)

type conversationsData struct {
	Sessions []agent.SessionSummary
	UserQ    string // admins: whose sessions ("" all)
}

// conversationsPage lists the person's sessions (admins: everyone's, or
// one user's), most recently active first.
func (c *Console) conversationsPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := conversationsData{}
	user := s.id.User
	if s.id.Has(mcpserver.RoleAdmin) {
		d.UserQ = strings.TrimSpace(r.URL.Query().Get("user"))
		user = d.UserQ // "" lists every user's sessions
	}
	list, err := c.conversations(r, user, conversationsShown)
	if err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	d.Sessions = list
	c.render(w, "sessions", s, d)
}

// conversations lists user's sessions ("" everyone's), up to limit.
func (c *Console) conversations(r *http.Request, user string, limit int) ([]agent.SessionSummary, error) {
	if c.opts.Runs == nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "this server lists no runs")
	}
	runs, err := c.opts.Runs.List(r.Context(), memory.Filter{UserID: user, InSession: true, Limit: conversationTurns})
	if err != nil {
		return nil, err
	}
	return agent.SessionsOf(runs, limit), nil
}

type conversationData struct {
	*agent.Session
	Own bool // the signed-in person's: they may add a turn
}

// conversationPage shows one session's turns in order, each with its
// goal, status and answer and a link to its run. The session is the
// person's own of that id; an admin names another user's with ?user=.
// Another user's session, asked for by anyone else, is 404 as an unknown
// one is: session ids do not leak.
func (c *Console) conversationPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	owner := s.id.User
	if u := strings.TrimSpace(q.Get("user")); u != "" && u != owner {
		if !s.id.Has(mcpserver.RoleAdmin) {
			c.fail(w, r, s, http.StatusNotFound, contracts.Errorf(contracts.CodeRunNotFound, "no session %q", q.Get("id")).With("session_id", q.Get("id")))
			return
		}
		owner = u
	}
	src, ok := c.opts.Engine.(mcpserver.Sessions)
	if !ok {
		c.fail(w, r, s, http.StatusNotFound, contracts.Errorf(contracts.CodeInvalidConfig, "this engine keeps no sessions"))
		return
	}
	sess, err := src.GetSession(r.Context(), owner, q.Get("id"), 0)
	if err != nil {
		c.fail(w, r, s, httpStatus(err), err)
		return
	}
	c.render(w, "session", s, conversationData{Session: sess, Own: owner == s.id.User})
}
