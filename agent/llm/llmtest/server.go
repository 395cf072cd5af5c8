package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
)

// Reply is one scripted answer. Role, when set, reserves it for requests
// of that role; Status, when set, answers with that HTTP error instead.
// Usage is the token count the answer reports (default: 10 prompt tokens,
// 5 completion tokens, none cached).
type Reply struct {
	Role    string
	Content string
	Status  int
	Usage   *Usage
}

// Usage is a scripted answer's token count.
type Usage struct {
	Prompt, Completion, Cached int64
}

// Message is one recorded chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one recorded call.
type Request struct {
	Role           string          // detected from the system prompt
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	ResponseFormat json.RawMessage `json:"response_format,omitempty"`
	Answered       bool            // false when no scripted reply fitted
}

// Server serves scripted replies in order and records every request.
type Server struct {
	URL string // base URL for the client, ending in /v1

	mu       sync.Mutex
	queue    []Reply
	requests []Request
	srv      *httptest.Server
}

// New starts a server with replies queued; it closes when t ends.
func New(t testing.TB, replies ...Reply) *Server {
	s := &Server{queue: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// Push queues more replies.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Requests returns a copy of the recorded requests.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Count returns how many requests of role were recorded ("" counts all).
func (s *Server) Count(role string) int {
	n := 0
	for _, r := range s.Requests() {
		if role == "" || r.Role == role {
			n++
		}
	}
	return n
}

// Pending returns how many scripted replies are still unused.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

var roleLine = regexp.MustCompile(`(?m)^role:\s*([a-z_.]+)`)

// RoleOf returns the role named by a "role: NAME" line in a system prompt.
func RoleOf(system string) string {
	if m := roleLine.FindStringSubmatch(system); m != nil {
		return m[1]
	}
	return ""
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	var req Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	for _, m := range req.Messages {
		if m.Role == "system" {
			req.Role = RoleOf(m.Content)
			break
		}
	}
	reply, ok := s.take(req.Role)
	req.Answered = ok
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case !ok:
		w.WriteHeader(http.StatusBadRequest) // 400: the client does not retry
		fmt.Fprintf(w, `{"error":{"message":"llmtest: no scripted reply for role %q"}}`, req.Role)
	case reply.Status != 0:
		w.WriteHeader(reply.Status)
		fmt.Fprintf(w, `{"error":{"message":%q}}`, reply.Content)
	default:
		u := Usage{Prompt: 10, Completion: 5}
		if reply.Usage != nil {
			u = *reply.Usage
		}
		body, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{
				"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": reply.Content},
			}},
			"usage": map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion,
				"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached}},
		})
		w.Write(body)
	}
}

// take removes and returns the first queued reply that fits role.
func (s *Server) take(role string) (Reply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.queue {
		if r.Role == "" || r.Role == role {
			s.queue = append(s.queue[:i:i], s.queue[i+1:]...)
			return r, true
		}
	}
	return Reply{}, false
}
