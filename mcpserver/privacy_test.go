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
