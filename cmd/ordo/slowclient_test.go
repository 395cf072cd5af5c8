package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/mcpserver"
)

// TestServeDropsSlowAndIdleClients: `ordo serve --http` with
// http.read_timeout and http.idle_timeout of 1s closes a connection whose
// request body comes a byte at a time (no token needed: the sign-in form
// reads its body before anything is checked) and one kept alive with no
// request; it took both for ever before. A run's event stream, open much
// longer than the read timeout, still follows its run to the end.
func TestServeDropsSlowAndIdleClients(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const token = "slow-client-token-0123456789"
	_, mcpURL := serveHTTP(t, ctx, token, "  read_timeout: 1s\n  idle_timeout: 1s\n")
	u, _ := url.Parse(mcpURL)

	// closed reports whether the server closed conn within the test's
	// patience (30 times the timeouts), draining what it answered.
	closed := func(conn net.Conn, drip bool) bool {
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		done := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, conn); done <- err }()
		for {
			select {
			case err := <-done:
				var ne net.Error
				return !(errors.As(err, &ne) && ne.Timeout())
			case <-time.After(200 * time.Millisecond):
				if drip {
					conn.Write([]byte("a"))
				}
			}
		}
	}
	dial := func() net.Conn {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}

	slow := dial()
	io.WriteString(slow, "POST /ui/signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n")
	if !closed(slow, true) {
		t.Error("a body sent a byte every 200 ms held its connection for 30 s")
	}

	idle := dial()
	io.WriteString(idle, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	if !closed(idle, false) {
		t.Error("a kept-alive connection with no second request was open after 30 s")
	}

	// A waiting run's stream, open 3 s (three read timeouts), then the
	// run approved: every entry comes, and the stream ends with the run.
	res := mcpCall(t, ctx, mcpURL, token, "plan", map[string]any{"plan": map[string]any{
		"version": "1.0", "goal": "shout", "timezone": "UTC", "actions": []any{map[string]any{
			"id": "a1", "tool": "text.template", "intent": "transform", "requires": []any{}, "produces": []any{"text"},
			"inputs": map[string]any{"template": "{{w}}!", "values": map[string]any{"w": "HI"}}}}}})
	var planned struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(testmcp.Text(res)), &planned); err != nil || planned.Status != "awaiting_approval" {
		t.Fatalf("plan: %s", testmcp.Text(res))
	}
	approved := make(chan *mcp.CallToolResult, 1)
	go func() {
		time.Sleep(3 * time.Second)
		approved <- mcpCall(t, ctx, mcpURL, token, "approve", map[string]any{"run_id": planned.RunID, "decision": "approve"})
	}()
	events := strings.TrimSuffix(mcpURL, "/mcp") + "/runs/" + planned.RunID + "/events"
	got := sseRead(t, ctx, events, token, "", 0)
	if res := <-approved; res.IsError {
		t.Fatalf("approve: %s", testmcp.Text(res))
	}
	if len(got) == 0 || mcpserver.EntryStatus(&got[len(got)-1]) != contracts.RunCompleted {
		t.Fatalf("the stream open past the read timeout ended after %d entries, not at the run's completion", len(got))
	}
}
