package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/jsonbound"
)

// authenticate wraps the MCP handler: a missing or unknown bearer token is
// 401, a tools/call of an admin tool by a caller without the admin role is
// 403, and the caller's identity rides the request context into handlers.
// An MCP session id is the caller's own or 404 (see sessionOwners). A
// notifications/cancelled ends only the caller's own requests (see
// inflight).
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ordo"`)
			writeHTTPError(w, http.StatusUnauthorized, contracts.Errorf(contracts.CodeUnauthorized, "a bearer token is required").With("field", "Authorization"))
			return
		}
		id, ok := s.tokens.lookup(token)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ordo", error="invalid_token"`)
			writeHTTPError(w, http.StatusUnauthorized, contracts.Errorf(contracts.CodeUnauthorized, "the bearer token is not valid").With("field", "Authorization"))
			return
		}
		sid := r.Header.Get(server.HeaderKeySessionID)
		if sid != "" {
			if !s.owners.enter(sid, id.User) {
				writeHTTPError(w, http.StatusNotFound, contracts.Errorf(contracts.CodeInvalidInput,
					"this MCP session is not this token's, or it ended (unused for %s): initialize a new one", s.sessionIdleTTL).With("field", server.HeaderKeySessionID))
				return
			}
			defer s.owners.leave(sid)
		}
		ctx := withIdentity(r.Context(), id)
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
			if err != nil {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					writeHTTPError(w, http.StatusRequestEntityTooLarge, contracts.Errorf(contracts.CodeInvalidInput, "request body exceeds %d bytes", s.opts.MaxBodyBytes).With("field", "body"))
					return
				}
				writeHTTPError(w, http.StatusBadRequest, contracts.Errorf(contracts.CodeInvalidInput, "read request body: %w", err).With("field", "body"))
				return
			}
			// Refused before anything decodes it (mcp-go and the tools would
			// build and walk every level), as a JSON-RPC error that MCP
			// clients report, with the coded error as its data.
			if err := contracts.CheckJSONDepth(body, contracts.MaxJSONDepth); err != nil {
				id, _ := jsonbound.Head(body)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(jsonbound.Refusal(id, err))
				return
			}
			msgs := readMessages(body)
			for _, name := range toolCalls(msgs) {
				if d := s.tools[name]; d != nil && d.admin && !id.Has(RoleAdmin) {
					writeHTTPError(w, http.StatusForbidden, contracts.Errorf(contracts.CodeForbidden,
						"tool %q needs the %s role", name, RoleAdmin).With("tool", name).With("user", id.User))
					return
				}
			}
			if len(msgs) == 1 {
				m := msgs[0]
				if m.isCancel() { // answered here: see inflight
					s.inflight.cancel(id.User, sid, m.Params.RequestID)
					w.WriteHeader(http.StatusAccepted)
					return
				}
				if m.isRequest() {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
					defer s.inflight.add(id.User, sid, m.ID, cancel)()
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if f, ok := w.(http.Flusher); ok {
				c := &sseCounter{ResponseWriter: w, flusher: f, written: newCounter()}
				ctx = context.WithValue(ctx, sseCounterKey{}, c)
				w = c
			}
		}
		if f, ok := w.(http.Flusher); ok {
			w = &statusFilter{ResponseWriter: w, flusher: f, ctx: ctx, tasks: s.tasks}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
		switch {
		case sid == "": // initialize: the session it opened is the caller's
			if opened := w.Header().Get(server.HeaderKeySessionID); opened != "" {
				s.owners.opened(opened, id.User)
			}
		case r.Method == http.MethodDelete:
			s.owners.end(sid)
		}
	})
}

type sseCounterKey struct{}

// sseCounter counts the SSE events written on one POST response, so a tool
// handler can wait until its notifications are on the wire (see
// notifier.delivered). mcp-go writes each event with a single Write.
// It wraps only flushable writers, so streaming support is unchanged.
type sseCounter struct {
	http.ResponseWriter
	flusher http.Flusher
	written *counter // SSE events written
}

var sseEventPrefix = []byte("event: ")

func (c *sseCounter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	if bytes.HasPrefix(p, sseEventPrefix) {
		c.written.add()
	}
	return n, err
}

func (c *sseCounter) Flush() { c.flusher.Flush() }

// Unwrap lets http.ResponseController reach the connection (mcp-go sets
// write deadlines through it).
func (c *sseCounter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// rpcMessage is what the HTTP layer reads of a JSON-RPC message: its id
// and method, a tools/call's tool, and the request a
// notifications/cancelled names.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// readMessages reads a JSON-RPC body (a single message or a batch).
// Bodies that are not JSON-RPC yield none; mcp-go answers those with a
// protocol error.
func readMessages(body []byte) []rpcMessage {
	var msgs []rpcMessage
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return nil
		}
	} else {
		var m rpcMessage
		if json.Unmarshal(trimmed, &m) != nil {
			return nil
		}
		msgs = []rpcMessage{m}
	}
	return msgs
}

// toolCalls names the tools the tools/call requests among msgs call.
func toolCalls(msgs []rpcMessage) []string {
	var out []string
	for _, m := range msgs {
		if m.Method == "tools/call" {
			out = append(out, m.Params.Name)
		}
	}
	return out
}

func writeHTTPError(w http.ResponseWriter, status int, e *contracts.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e)
}
