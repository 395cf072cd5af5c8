package agent

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// Conversations: a run with a session id is a
// turn of its user's conversation of that name. When the run is created,
// the session's last SessionTurns turns (goal and answer) are read from the
// store once and kept in the run (Run.Conversation), so the planner, the
// re-planner and the composer see the same history in any process,
// without listing the store again per step. Sessions are private: the
// turns are found by user and session id together, so two users' sessions
// of the same name are two conversations.

// SessionTurns is how many earlier turns of a session the models see.
const SessionTurns = 10

// MaxSessionID bounds a session id, in bytes.
const MaxSessionID = 128

// MaxContext bounds a caller's context, in bytes (the MCP schemas' maxLength).
const MaxContext = 100000

// MaxGoal bounds a run's goal, in bytes, when the run is created: every
// entry of the run's log carries the goal, so a 900 KB goal made each
// step's entry 900 KB (a 50-step plan, a 54 MB store). Longer text is the
// context, which the run keeps once.
const MaxGoal = 10000

// turnTextLimit bounds a turn's goal and answer in the run, in runes: the
// history must not crowd the prompt.
const turnTextLimit = 2000

// CheckSessionID refuses a session id that is empty, too long, not UTF-8,
// padded with spaces or holds control characters.
func CheckSessionID(id string) error {
	bad := func(why string) error {
		return contracts.Errorf(contracts.CodeInvalidInput, "session id %q %s", id, why).With("field", "session_id")
	}
	switch {
	case id == "":
		return bad("is empty")
	case len(id) > MaxSessionID:
		return bad("is longer than 128 bytes")
	case !utf8.ValidString(id):
		return bad("is not UTF-8")
	case strings.TrimSpace(id) != id:
		return bad("starts or ends with a space")
	case strings.ContainsFunc(id, unicode.IsControl):
		return bad("holds a control character")
	}
	return nil
}

// checkTurnRequest refuses a request whose session or context cannot be
// kept: a context never goes silently unused or cut.
func (e *Engine) checkTurnRequest(ctx context.Context, req Request) error {
	if req.Session != "" {
		if err := CheckSessionID(req.Session); err != nil {
			return err
		}
		if req.UserID == "" {
			return contracts.Errorf(contracts.CodeInvalidInput, "session %q needs a user: a session is one user's conversation", req.Session).
				With("field", "session_id")
		}
	}
	if req.Context == "" {
		return nil
	}
	if len(req.Context) > MaxContext {
		return contracts.Errorf(contracts.CodeInvalidInput, "context is %d bytes, over the limit of %d; shorten it rather than have it cut",
			len(req.Context), MaxContext).With("field", "context").With("limit", MaxContext)
	}
	if e.model(ctx) == nil && req.seed == nil { // a fork keeps its run's context in the record
		return contracts.Errorf(contracts.CodeInvalidInput, "context is for the planner, re-planner and composer, and no model is configured to read it; leave it out or configure a model").
			With("field", "context")
	}
	return nil
}

// conversation is the user's session's last SessionTurns turns, oldest
// first, read when a turn starts.
func (e *Engine) conversation(ctx context.Context, user, session string) ([]contracts.Turn, error) {
	if session == "" {
		return nil, nil
	}
	s, err := readSession(ctx, e.deps.Store, user, session, SessionTurns)
	if err != nil || s == nil {
		return nil, err
	}
	return s.Turns, nil
}

// Session is one user's conversation: its turns, oldest first.
type Session struct {
	ID        string           `json:"session_id"`
	UserID    string           `json:"user_id"`
	Turns     []contracts.Turn `json:"turns"`
	CreatedAt time.Time        `json:"created_at"`
	UpdatedAt time.Time        `json:"updated_at"`
}

// SessionSummary is one row of Sessions.
type SessionSummary struct {
	ID        string    `json:"session_id"`
	UserID    string    `json:"user_id"`
	Turns     int       `json:"turns"`
	LastGoal  string    `json:"last_goal"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// maxSessionTurnsListed bounds the turns GetSession and Sessions read.
const maxSessionTurnsListed = 1000

// Sessions lists user's sessions (ListSessions over the engine's store).
func (e *Engine) Sessions(ctx context.Context, user string, limit int) ([]SessionSummary, error) {
	return ListSessions(ctx, e.deps.Store, user, limit)
}

// GetSession returns one of user's sessions (GetSession over the
// engine's store).
func (e *Engine) GetSession(ctx context.Context, user, id string, limit int) (*Session, error) {
	return GetSession(ctx, e.deps.Store, user, id, limit)
}

// ListSessions lists user's sessions in st, most recently active first, up
// to limit (0: 20). Only that user's: a user sees no one else's sessions.
func ListSessions(ctx context.Context, st memory.Checkpointer, user string, limit int) ([]SessionSummary, error) {
	if user == "" {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "sessions belong to a user; none given").With("field", "user")
	}
	if limit <= 0 {
		limit = 20
	}
	runs, err := st.List(ctx, memory.Filter{UserID: user, InSession: true, Limit: maxSessionTurnsListed})
	if err != nil {
		return nil, err
	}
	return SessionsOf(runs, limit), nil
}

// SessionsOf groups turns listed newest first (List with InSession) into
// their sessions, one per user and session id, most recently active
// first, up to limit. The web console lists an admin's view of everyone's
// sessions with it.
func SessionsOf(runs []memory.RunSummary, limit int) []SessionSummary {
	out := []SessionSummary{}
	type key struct{ user, session string }
	at := map[key]int{}
	for _, r := range runs { // newest first
		k := key{r.UserID, r.SessionID}
		i, ok := at[k]
		if !ok {
			if len(out) == limit {
				continue
			}
			i = len(out)
			at[k] = i
			out = append(out, SessionSummary{ID: r.SessionID, UserID: r.UserID, LastGoal: r.Goal, UpdatedAt: r.UpdatedAt, CreatedAt: r.CreatedAt})
		}
		s := &out[i]
		s.Turns++
		if r.CreatedAt.Before(s.CreatedAt) {
			s.CreatedAt = r.CreatedAt
		}
	}
	return out
}

// GetSession returns user's session id in st with its turns, oldest
// first, up to the last limit (0: all, at most 1000). An unknown session,
// or another user's, is CodeRunNotFound: ids do not leak.
func GetSession(ctx context.Context, st memory.Checkpointer, user, id string, limit int) (*Session, error) {
	if err := CheckSessionID(id); err != nil {
		return nil, err
	}
	if user == "" {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "sessions belong to a user; none given").With("field", "user")
	}
	if limit <= 0 || limit > maxSessionTurnsListed {
		limit = maxSessionTurnsListed
	}
	s, err := readSession(ctx, st, user, id, limit)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, contracts.Errorf(contracts.CodeRunNotFound, "no session %q", id).With("session_id", id)
	}
	return s, nil
}

// readSession reads the last limit turns of user's session (nil if it has
// none): one List, then each turn's record for its answer.
func readSession(ctx context.Context, st memory.Checkpointer, user, id string, limit int) (*Session, error) {
	runs, err := st.List(ctx, memory.Filter{UserID: user, SessionID: id, Limit: limit})
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	s := &Session{ID: id, UserID: user, UpdatedAt: runs[0].UpdatedAt}
	for _, r := range runs {
		run, err := st.Load(ctx, r.ID)
		if contracts.CodeOf(err) == contracts.CodeRunNotFound {
			continue // deleted since it was listed
		}
		if err != nil {
			return nil, err
		}
		s.Turns = append(s.Turns, turnOf(run))
	}
	slices.SortStableFunc(s.Turns, func(a, b contracts.Turn) int { return a.At.Compare(b.At) })
	if len(s.Turns) > 0 {
		s.CreatedAt = s.Turns[0].At
	}
	return s, nil
}

// turnOf is what a run says as a turn: its goal and its answer (or, for
// a run that has none, its error), cut to turnTextLimit runes.
func turnOf(run *contracts.Run) contracts.Turn {
	t := contracts.Turn{RunID: run.ID, Goal: clipTo(run.Goal, turnTextLimit), Status: run.Status, At: run.CreatedAt}
	switch {
	case run.Result != nil:
		t.Answer = clipTo(run.Result.Answer, turnTextLimit)
	case run.Error != nil:
		t.Answer = clipTo(run.Error.Message, turnTextLimit)
	}
	return t
}

// clipTo cuts s to n runes, marking the cut with "…".
func clipTo(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// withTurns adds the run's conversation and context to a model's input,
// where there are any.
func withTurns(run *contracts.Run, in map[string]any) map[string]any {
	if len(run.Conversation) > 0 {
		turns := make([]map[string]any, len(run.Conversation))
		for i, t := range run.Conversation {
			turns[i] = map[string]any{"goal": t.Goal, "answer": t.Answer, "status": t.Status}
		}
		in["conversation"] = turns
	}
	if run.Context != "" {
		in["context"] = run.Context
	}
	return in
}
