package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/mcpserver"
)

// httpSession connects an MCP client to `ordo serve --http` at mcpURL
// with a bearer token and initializes the session.
func httpSession(ctx context.Context, mcpURL, token string) (*client.Client, error) {
	c, err := client.NewStreamableHttpClient(mcpURL, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.Initialize(ctx, initRequest()); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize with the token: %w", err)
	}
	return c, nil
}

// mcpCall calls a tool on `ordo serve --http` and returns its result,
// tool errors included.
func mcpCall(t *testing.T, ctx context.Context, mcpURL, token, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	c, err := httpSession(ctx, mcpURL, token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// sseRead reads a run's event stream from GET /runs/ID/events until the
// server ends it, or n events when n > 0; it returns the entries.
func sseRead(t *testing.T, ctx context.Context, url, token, lastID string, n int) []contracts.RunDelta {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // drops the connection when n events were read
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var out []contracts.RunDelta
	var id, event string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var v mcpserver.EventView
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &v); err != nil || v.Entry == nil {
				t.Fatalf("event %s %s: %v %s", id, event, err, line)
			}
			if itoa(v.Seq) != id || v.Kind != event {
				t.Fatalf("event id %s kind %s carries %d %s", id, event, v.Seq, v.Kind)
			}
			out = append(out, *v.Entry)
			if n > 0 && len(out) == n {
				return out
			}
		}
	}
	return out
}

// TestServeForkAndEventStream: through a real `ordo serve --http`, a run
// fails at its second step, fork_run retries it from there once the cause
// is fixed, and GET /runs/ID/events streams the fork's log — read in two
// connections, the second resuming with Last-Event-ID — entry for entry as
// the store holds it. A user without the run gets 404.
func TestServeForkAndEventStream(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	const token, bobToken = "serve-fork-token-0123456789", "serve-bob-token-0123456789"
	srv := serve(t, ctx, serverSpec{store: "embedded", token: token,
		config: "    - {name: bob, token_env: BOB_TOKEN, role: user}\npolicy:\n  users:\n    ada: [\"ada:scope\"]\n    bob: [\"bob:scope\"]\n",
		// no model: a failed step would wait at step_failed; this run fails
		vars: []string{"ORDO_SHEETS_ROOT=" + root, "BOB_TOKEN=" + bobToken, "ORDO_ON_FAILURE=fail"}})
	base := strings.TrimSuffix(srv.url, "/mcp")

	var plan map[string]any
	if err := json.Unmarshal([]byte(chainPlan), &plan); err != nil {
		t.Fatal(err)
	}
	// bob's run fails; ada (an admin) forks it: the fork is ada's, with
	// ada's scopes.
	res := mcpCall(t, ctx, srv.url, bobToken, "execute", map[string]any{"plan": plan, "options": map[string]any{"auto_approve": true}})
	var failed struct {
		Code    contracts.Code `json:"code"`
		Details struct {
			RunID  string `json:"run_id"`
			Status string `json:"status"`
		} `json:"details"`
	}
	if err := json.Unmarshal([]byte(testmcp.Text(res)), &failed); !res.IsError || err != nil || failed.Details.Status != "failed" {
		t.Fatalf("execute: %v %s", err, testmcp.Text(res))
	}
	if err := os.WriteFile(filepath.Join(root, "later.csv"), []byte("name\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	res = mcpCall(t, ctx, srv.url, token, "fork_run", map[string]any{"run_id": failed.Details.RunID, "from_action": "nope"})
	if !res.IsError || !strings.Contains(testmcp.Text(res), `"field":"from_action"`) {
		t.Fatalf("fork_run from an unknown action: %s", testmcp.Text(res))
	}
	res = mcpCall(t, ctx, srv.url, token, "fork_run", map[string]any{"run_id": failed.Details.RunID, "from_action": "read"})
	if res.IsError {
		t.Fatalf("fork_run: %s", testmcp.Text(res))
	}
	var fork struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
		Steps  []struct {
			ActionID string `json:"action_id"`
			Status   string `json:"status"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(testmcp.Text(res)), &fork); err != nil || fork.Status != "completed" {
		t.Fatalf("fork: %v %s", err, testmcp.Text(res))
	}

	res = mcpCall(t, ctx, srv.url, token, "run_status", map[string]any{"run_id": fork.RunID})
	var rec contracts.Run
	if err := json.Unmarshal([]byte(testmcp.Text(res)), &rec); err != nil || rec.UserID != "ada" || strings.Join(rec.Options.Scopes, ",") != "ada:scope" {
		t.Fatalf("the fork's owner and scopes: %q %v (%v)", rec.UserID, rec.Options.Scopes, err)
	}

	url := base + "/runs/" + fork.RunID + "/events"
	first := sseRead(t, ctx, url, token, "", 2)
	rest := sseRead(t, ctx, url, token, itoa(first[len(first)-1].Seq), 0)
	got := append(first, rest...)
	whole := sseRead(t, ctx, url, token, "", 0)
	if len(got) != len(whole) || len(whole) < 3 {
		t.Fatalf("resumed %d entries, whole stream %d", len(got), len(whole))
	}
	for i := range whole {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(whole[i])
		if string(g) != string(w) || whole[i].Seq != int64(i+1) {
			t.Fatalf("entry %d:\n%s\n%s", i, g, w)
		}
	}
	run, err := contracts.FoldRun(whole)
	if err != nil || run.Status != contracts.RunCompleted || run.ID != fork.RunID {
		t.Fatalf("fold: %v %+v", err, run)
	}
	// The fork took greet's record over: one attempt, the source's.
	n := 0
	for _, s := range run.Steps {
		if s.ActionID == "greet" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("greet has %d records in the fork", n)
	}

	// bob does not own the fork: not found, as for an unknown id.
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+bobToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("bob reads ada's run's events: %d", resp.StatusCode)
	}
}
