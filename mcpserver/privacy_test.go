package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
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
