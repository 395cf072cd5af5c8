package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/memory"
)

// modernPost sends one JSON-RPC message of protocol 2026-07-28 to /mcp
// (no session; sid, when set, is sent as an Mcp-Session-Id header, which
// that protocol ignores) and returns the response, body unread; id < 0
// sends a notification.
func modernPost(url, token, sid, method, name, params string, id int) (*http.Response, error) {
	meta := fmt.Sprintf(`"_meta":{%q:%q,%q:{"name":"probe","version":"1"},%q:{}}`,
		mcp.MetaKeyProtocolVersion, mcp.ProtocolVersion20260728, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities)
	head := `"jsonrpc":"2.0"`
	if id >= 0 {
		head += fmt.Sprintf(`,"id":%d`, id)
	}
	body := fmt.Sprintf(`{%s,"method":%q,"params":{%s,%s}}`, head, method, params, meta)
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20260728)
	req.Header.Set(mcp.HeaderMethod, method)
	if name != "" {
		req.Header.Set(mcp.HeaderName, name)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return http.DefaultClient.Do(req)
}

// TestCancelReachesOnlyItsSendersRequest: on protocol 2026-07-28 every
// HTTP request has the same, empty, session id, and mcp-go keyed
// cancellation by session and request id, so ada's notifications/cancelled
// for id 7 ended bob's in-flight execute with id 7 (and his
// subscriptions/listen streams). Now a cancellation ends only its sender's
// requests, with or without a made-up Mcp-Session-Id; bob's own still
// stops his.
func TestCancelReachesOnlyItsSendersRequest(t *testing.T) {
	e := newEnv(t)
	ts := e.httpServer(t)
	open := e.closeGate()
	defer open()
	plan := `{"version":"1.0","goal":"wait","timezone":"UTC","actions":[{"id":"a1","tool":"test.wait","intent":"read","requires":[],"produces":["waited"],"inputs":{"label":"w"}}]}`
	execute := func(id int) (string, chan string) {
		got := make(chan string, 1)
		go func() {
			resp, err := modernPost(ts.URL, userToken, "", "tools/call", "execute",
				`"name":"execute","arguments":{"plan":`+plan+`,"options":{"auto_approve":true}}`, id)
			if err != nil {
				got <- err.Error()
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			got <- string(b)
		}()
		var runID string
		testwait.Until(t, 20*time.Second, "bob's run to wait in its step", func() bool {
			runs, _ := e.store.List(context.Background(), memory.Filter{UserID: "bob", Status: []contracts.RunStatus{contracts.RunRunning}})
			if len(runs) == 1 {
				runID = runs[0].ID
			}
			return runID != ""
		})
		return runID, got
	}
	cancel := func(token, sid string, id int) {
		resp, err := modernPost(ts.URL, token, sid, "notifications/cancelled", "", fmt.Sprintf(`"requestId":%d`, id), -1)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/cancelled: %s", resp.Status)
		}
	}

	runID, got := execute(7)
	for id := range 20 { // ada cancels ids 0..19, with and without a session id of her own making
		cancel(adminToken, "", id)
		cancel(adminToken, "made-up", id)
	}
	cancel(userToken, "", 8) // bob, another id
	open()
	if out := <-got; !strings.Contains(out, `\"status\":\"completed\"`) {
		t.Fatalf("bob's execute after ada's cancellations: %s", out)
	}

	// Bob cancels his own: the run stops at its step boundary.
	open = e.closeGate()
	runID2, got := execute(7)
	if runID2 == runID {
		t.Fatal("the same run twice")
	}
	cancel(userToken, "", 7)
	open() // the call in flight finishes; the run stops after it
	<-got  // the request ends once its job has stopped
	if run, err := e.store.Load(context.Background(), runID2); err != nil || run.Status != contracts.RunReady || run.Error == nil || run.Error.Code != contracts.CodeCancelled {
		t.Fatalf("bob's cancelled execute: %+v %v", run, err)
	}
	// The next execute continues it.
	resp, err := modernPost(ts.URL, userToken, "", "tools/call", "execute", `"name":"execute","arguments":{"run_id":"`+runID2+`"}`, 9)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), `\"status\":\"completed\"`) {
		t.Fatalf("execute after the cancel: %s", b)
	}
}
