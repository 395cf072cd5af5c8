package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent"
)

// Sessions is implemented by engines that keep conversations
// (*agent.Engine does): list_sessions and get_session are offered only
// then.
type Sessions interface {
	Sessions(ctx context.Context, user string, limit int) ([]agent.SessionSummary, error)
	GetSession(ctx context.Context, user, id string, limit int) (*agent.Session, error)
}

// sessionDefs are the conversation tools. A caller sees only their own
// sessions: the engine finds turns by the caller's user and the session id
// together, admins included, so a session id never reaches another user.
func (s *Server) sessionDefs() []*toolDef {
	if _, ok := s.opts.Engine.(Sessions); !ok {
		return nil
	}
	return []*toolDef{
		{name: "list_sessions", title: "List your conversations", input: "list_sessions.input.json", output: "list_sessions.output.json", hints: readHints,
			handle: s.handleListSessions,
			desc:   "Your conversations (runs started with a session_id), most recently active first: each session's id, number of turns and last goal."},
		{name: "get_session", title: "One conversation", input: "get_session.input.json", output: "get_session.output.json", hints: readHints,
			handle: s.handleGetSession,
			desc:   "One of your conversations: its turns, oldest first, each with its run_id, goal, answer and status. The last 10 turns are what the planner, re-planner and composer see when you plan or execute with this session_id."},
	}
}

func (s *Server) handleListSessions(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		Limit int `json:"limit"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	list, err := s.opts.Engine.(Sessions).Sessions(ctx, identityFrom(ctx).User, a.Limit)
	if err != nil {
		return nil, err
	}
	return okResult(map[string]any{"sessions": list, "count": len(list)})
}

func (s *Server) handleGetSession(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct {
		SessionID string `json:"session_id"`
		Limit     int    `json:"limit"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	sess, err := s.opts.Engine.(Sessions).GetSession(ctx, identityFrom(ctx).User, a.SessionID, a.Limit)
	if err != nil {
		return nil, err
	}
	return okResult(sess)
}
