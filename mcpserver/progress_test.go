package mcpserver_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
)

// TestProgressCarriesTotal: once the run has a plan, every progress
// notification carries total = the plan's action count, and the last one
// reports every action done out of it.
func TestProgressCarriesTotal(t *testing.T) {
	e, _ := newChainEnv(t)
	var mu sync.Mutex
	var got []map[string]any
	c := e.stdioClient(t, clientOpts{onNotif: func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			mu.Lock()
			got = append(got, n.Params.AdditionalFields)
			mu.Unlock()
		}
	}})
	plan := chainPlan()
	actions := float64(len(plan["actions"].([]any)))
	res, err := callRaw(c, "execute", map[string]any{"plan": plan}, &mcp.Meta{ProgressToken: "p1"})
	if err != nil || res.IsError {
		t.Fatalf("execute: %v %s", err, testmcp.Text(res))
	}
	message := func(p map[string]any) string { m, _ := p["message"].(string); return m }
	waitCompleted(t, func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			return ""
		}
		return message(got[len(got)-1])
	})
	mu.Lock()
	defer mu.Unlock()
	planned := false
	for _, p := range got {
		planned = planned || strings.Contains(message(p), ": plan_ready")
		if total, ok := p["total"]; planned != ok || (ok && total != actions) {
			t.Fatalf("%q: total %v, want %v once planned (planned: %v)", message(p), total, actions, planned)
		}
	}
	if last := got[len(got)-1]; last["progress"] != actions {
		t.Fatalf("last progress %v of %v", last["progress"], last["total"])
	}
}

// TestNoProgressAfterCancel: once a client cancels an execute, it hears no
// more progress for it, though the run winds down (the step in flight
// finishes, the run stops) after the cancellation: before, those events
// went out as progress for a request the client had given up on (the
// TypeScript SDK reports each as an error: unknown progress token).
func TestNoProgressAfterCancel(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	heard := map[any][]string{} // progress messages by token
	c := e.stdioClient(t, clientOpts{onNotif: func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			mu.Lock()
			msg, _ := n.Params.AdditionalFields["message"].(string)
			tok := n.Params.AdditionalFields["progressToken"]
			heard[tok] = append(heard[tok], msg)
			mu.Unlock()
		}
	}})
	count := func(tok string) int {
		mu.Lock()
		defer mu.Unlock()
		return len(heard[tok])
	}
	open := e.closeGate()
	defer open()
	auto := map[string]any{"auto_approve": true}
	id := mcp.NewRequestId(2000 + requestIDs.Add(1))
	done := make(chan *transport.JSONRPCResponse, 1)
	go func() {
		resp, _ := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: "tools/call",
			Params: map[string]any{"name": "execute", "arguments": map[string]any{"plan": waitPlan(), "options": auto}, "_meta": map[string]any{"progressToken": "cancelled"}}})
		done <- resp
	}()
	testwait.Until(t, 20*time.Second, "the step to start", func() bool {
		mu.Lock()
		defer mu.Unlock()
		msgs := heard["cancelled"]
		return len(msgs) > 0 && strings.Contains(msgs[len(msgs)-1], "step_started a1")
	})
	before := count("cancelled")
	// The client cancels; stdio reads in order, so once a later call is
	// answered the server has handled the cancellation.
	if err := c.GetTransport().SendNotification(context.Background(), mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{Method: string(mcp.MethodNotificationCancelled), Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id}}}}); err != nil {
		t.Fatal(err)
	}
	call(t, c, "list_runs", map[string]any{})
	runID := runningRun(t, e)
	open() // the step in flight finishes; the run stops after it
	settled(t, e, runID)
	// A barrier: this call's progress is written before its response, and
	// stdio writes notifications in the order they were queued.
	if _, err := callRaw(c, "execute", map[string]any{"plan": upperPlan("barrier"), "options": auto}, &mcp.Meta{ProgressToken: "barrier"}); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 20*time.Second, "the barrier's progress", func() bool { return count("barrier") > 0 })
	if n := count("cancelled"); n != before {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%d progress notifications after the cancellation: %v", n-before, heard["cancelled"][before:])
	}
}
