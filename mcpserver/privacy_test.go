package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory"
)

// TestAnotherUsersRunAnswersAsAnUnknownOne: over HTTP, another user's run
// answers exactly what an id nobody has does (the ids swapped), through
// run_status, the run resource and the event stream, so no answer tells a
// caller that a run they guessed or saw exists.
func TestAnotherUsersRunAnswersAsAnUnknownOne(t *testing.T) {
	e, _ := newChainEnv(t)
	ts := e.httpServer(t)
	bob := httpClient(t, ts.URL, userToken, clientOpts{})
	eve := httpClient(t, ts.URL, otherToken, clientOpts{})
	bobs := call(t, bob, "plan", map[string]any{"plan": chainPlan()})["run_id"].(string)
	const unknown = "run_000000000000000000000000"
	same := func(what, theirs, nobodys string) {
		t.Helper()
		if theirs != strings.ReplaceAll(nobodys, unknown, bobs) {
			t.Errorf("%s: another user's run answers\n  %s\nan unknown one\n  %s", what, theirs, nobodys)
		}
	}

	status := func(id string) string {
		code, body := toolError(t, eve, "run_status", map[string]any{"run_id": id})
		if code != contracts.CodeRunNotFound {
			t.Fatalf("run_status %s: code %d", id, code)
		}
		data, _ := json.Marshal(body)
		return string(data)
	}
	same("run_status", status(bobs), status(unknown))

	read := func(id string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err := eve.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: runURI(id)}})
		if err == nil {
			t.Fatalf("eve read %s", runURI(id))
		}
		return err.Error()
	}
	same("resource", read(bobs), read(unknown))

	stream := func(id string) string {
		resp := openEvents(t, context.Background(), ts.URL+"/runs/"+id+"/events", otherToken, nil)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("events of %s: %s %s", id, resp.Status, body)
		}
		return string(body)
	}
	same("event stream", stream(bobs), stream(unknown))
}

// TestSessionBoundToItsToken: an MCP session id (Mcp-Session-Id, the
// revisions before 2026-07-28) belongs to the user whose token opened it.
// Another user's token with it is 404 on POST, on GET (the session's
// stream, where its notifications, elicitation and sampling requests go)
// and on DELETE; the owner's session and subscriptions go on.
func TestSessionBoundToItsToken(t *testing.T) {
	e := newEnv(t)
	ts := e.httpServer(t)
	u := newUpdates()
	ada := httpClient(t, ts.URL, adminToken, clientOpts{legacy: true, onNotif: u.hear})
	sid := ada.GetSessionId()
	hers := call(t, ada, "plan", map[string]any{"plan": upperPlan("hers")})["run_id"].(string)
	subscribe(t, ada, runURI(hers))
	subs := mcpserver.SubscriptionCount(e.srv)

	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
		}
		req, _ := http.NewRequestWithContext(ctx, method, ts.URL+"/mcp", body)
		req.Header.Set("Authorization", "Bearer "+userToken)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s /mcp with another user's session: %s, want 404", method, resp.Status)
		}
		resp.Body.Close()
		cancel()
	}
	if n := mcpserver.SubscriptionCount(e.srv); n != subs {
		t.Errorf("%d subscriptions after another user's DELETE, want %d", n, subs)
	}
	// ada's session still hears about her run.
	call(t, ada, "approve", map[string]any{"run_id": hers, "decision": "approve"})
	u.await(t, runURI(hers), 1)
	// bob's own session works.
	bob := httpClient(t, ts.URL, userToken, clientOpts{legacy: true})
	call(t, bob, "list_runs", map[string]any{})
}

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
