package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/mcpserver"
)

// updates records the notifications/resources/updated a client hears.
type updates struct {
	mu     sync.Mutex
	byURI  map[string]int
	order  []string
	change chan struct{}
}

func newUpdates() *updates { return &updates{byURI: map[string]int{}, change: make(chan struct{}, 1)} }

func (u *updates) hear(n mcp.JSONRPCNotification) {
	if n.Method != mcp.MethodNotificationResourceUpdated {
		return
	}
	uri, _ := n.Params.AdditionalFields["uri"].(string)
	u.mu.Lock()
	u.byURI[uri]++
	u.order = append(u.order, uri)
	u.mu.Unlock()
	select {
	case u.change <- struct{}{}:
	default:
	}
}

func (u *updates) count(uri string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.byURI[uri]
}

// await waits until uri has been announced at least n times.
func (u *updates) await(t *testing.T, uri string, n int) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for u.count(uri) < n {
		select {
		case <-u.change:
		case <-deadline:
			u.mu.Lock()
			defer u.mu.Unlock()
			t.Fatalf("no update for %s (heard %v)", uri, u.order)
		}
	}
}

func runURI(id string) string { return "ordo://runs/" + id }

func subscribe(t *testing.T, c *client.Client, uri string) {
	t.Helper()
	//lint:ignore SA1019 resources/subscribe is still served for clients of older protocol versions, and tested
	if err := c.Subscribe(context.Background(), mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}); err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
}

// TestResourceSubscriptions: a subscribed run record is announced when the
// run is checkpointed, its plan graph when the plan changes, and nothing
// after unsubscribing. Each phase ends with a barrier: an update of
// another run, sent after every update of the phase on the same session,
// in order (stdio writes one session's notifications in order).
func TestResourceSubscriptions(t *testing.T) {
	e := newEnv(t)
	u := newUpdates()
	c := e.stdioClient(t, clientOpts{legacy: true, onNotif: u.hear})
	x := call(t, c, "plan", map[string]any{"plan": deletePlan("x")})["run_id"].(string)
	y := call(t, c, "plan", map[string]any{"plan": upperPlan("y")})["run_id"].(string)
	z := call(t, c, "plan", map[string]any{"plan": upperPlan("z")})["run_id"].(string)
	for _, uri := range []string{runURI(x), runURI(x) + "/mermaid", runURI(y), runURI(z), "test://not-ordo"} {
		subscribe(t, c, uri)
	}
	if n := mcpserver.SubscriptionCount(e.srv); n != 4 { // a URI that is no run's never changes: nothing is kept
		t.Fatalf("%d subscriptions, want 4", n)
	}

	// The plan is edited (a new plan version), then runs to the delete's
	// step approval.
	out := call(t, c, "approve", map[string]any{"run_id": x, "decision": "edit", "plan": deletePlan("x2")})
	if out["status"] != "interrupted" {
		t.Fatalf("edit: %v", out)
	}
	call(t, c, "approve", map[string]any{"run_id": y, "decision": "approve"})
	u.await(t, runURI(y), 1)
	records, graphs := u.count(runURI(x)), u.count(runURI(x)+"/mermaid")
	if records < 2 || graphs != 1 {
		t.Fatalf("x: %d record updates (want several checkpoints), %d plan graph updates (want 1)", records, graphs)
	}

	// Unsubscribed: x runs to completion unannounced; its plan is unchanged.
	//lint:ignore SA1019 as subscribe above
	if err := c.Unsubscribe(context.Background(), mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: runURI(x)}}); err != nil {
		t.Fatal(err)
	}
	if done := call(t, c, "approve", map[string]any{"run_id": x, "decision": "approve"}); done["status"] != "completed" {
		t.Fatalf("x: %v", done)
	}
	call(t, c, "approve", map[string]any{"run_id": z, "decision": "approve"})
	u.await(t, runURI(z), 1)
	if n := u.count(runURI(x)); n != records {
		t.Fatalf("x announced %d more times after unsubscribing", n-records)
	}
	if n := u.count(runURI(x) + "/mermaid"); n != graphs {
		t.Fatalf("x's plan graph announced again without a new plan (%d)", n)
	}
	if n := u.count("test://not-ordo"); n != 0 {
		t.Fatalf("a foreign URI was announced %d times", n)
	}
	// What was announced is what a read returns.
	res, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: runURI(z)}})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("read z: %v", err)
	}
}

// TestResourceSubscriptionsHTTP: over streamable HTTP with a session
// (protocol 2025-11-25, updates on the session's GET stream) and with
// subscriptions/listen (2026-07-28), where another user's run is never
// announced and the subscriptions end with the stream.
func TestResourceSubscriptionsHTTP(t *testing.T) {
	e := newEnv(t)
	ts := e.httpServer(t)
	ada := httpClient(t, ts.URL, adminToken, clientOpts{})

	t.Run("legacy", func(t *testing.T) {
		u := newUpdates()
		bob := httpClient(t, ts.URL, userToken, clientOpts{legacy: true, onNotif: u.hear})
		id := call(t, bob, "plan", map[string]any{"plan": upperPlan("legacy")})["run_id"].(string)
		subscribe(t, bob, runURI(id))
		call(t, bob, "approve", map[string]any{"run_id": id, "decision": "approve"})
		u.await(t, runURI(id), 1)

		// The session ends (DELETE, with the token): so do its subscriptions.
		base := mcpserver.SubscriptionCount(e.srv)
		if status, _ := sessionRequest(t, ts.URL, userToken, bob.GetSessionId(), http.MethodDelete, ""); status != http.StatusOK {
			t.Fatalf("DELETE: %d", status)
		}
		if n := mcpserver.SubscriptionCount(e.srv); n != base-1 {
			t.Fatalf("%d subscriptions after the session ended, want %d", n, base-1)
		}
	})

	t.Run("listen", func(t *testing.T) {
		u := newUpdates()
		bob := httpClient(t, ts.URL, userToken, clientOpts{onNotif: u.hear})
		mine := call(t, bob, "plan", map[string]any{"plan": upperPlan("mine")})["run_id"].(string)
		hers := call(t, ada, "plan", map[string]any{"plan": upperPlan("hers")})["run_id"].(string)
		base := mcpserver.SubscriptionCount(e.srv)
		stop, err := bob.ListenAsync(context.Background(), mcp.SubscriptionFilter{ResourceSubscriptions: []string{runURI(hers), runURI(mine)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, 20*time.Second, "the listen stream's subscriptions", func() bool { return mcpserver.SubscriptionCount(e.srv) == base+2 })
		call(t, ada, "approve", map[string]any{"run_id": hers, "decision": "approve"})
		call(t, bob, "approve", map[string]any{"run_id": mine, "decision": "approve"})
		u.await(t, runURI(mine), 1)
		if n := u.count(runURI(hers)); n != 0 {
			t.Fatalf("bob heard %d updates of ada's run", n)
		}
		stop()
		testwait.Until(t, 20*time.Second, "the subscriptions to end with the stream", func() bool { return mcpserver.SubscriptionCount(e.srv) == base })
	})
}

// TestSubscriptionsAreBounded: a client subscribing to ever more URIs, or
// to huge ones, no longer grows the server's memory without end (60
// subscriptions to 3 MB URIs took `ordo serve --http` from 65 MB to 378 MB
// RSS). Past the bound a subscription is acknowledged and not kept; the
// runs subscribed within it are still announced.
func TestSubscriptionsAreBounded(t *testing.T) {
	e := newEnv(t)
	u := newUpdates()
	c := e.stdioClient(t, clientOpts{legacy: true, onNotif: u.hear})
	id := call(t, c, "plan", map[string]any{"plan": upperPlan("bounded")})["run_id"].(string)
	subscribe(t, c, runURI(id))
	subscribe(t, c, runURI(id)+"/events?after=0&pad="+strings.Repeat("a", 1<<20))
	subscribe(t, c, "test://"+strings.Repeat("b", 1<<20))
	for i := range 1100 {
		subscribe(t, c, runURI(fmt.Sprintf("run_%024x", i)))
	}
	if n := mcpserver.SubscriptionCount(e.srv); n != 1000 {
		t.Fatalf("%d subscriptions kept, want the bound, 1000", n)
	}
	call(t, c, "approve", map[string]any{"run_id": id, "decision": "approve"})
	u.await(t, runURI(id), 1)
}

// TestIdleHTTPSessionEnds: an HTTP session (2025-11-25) left unused is
// dropped with its subscriptions, and its id is then refused. mcp-go kept every session until a
// DELETE, which mcp-go's own Go client sends without the bearer token
// (refused): 5000 initializes grew `ordo serve --http` by 50 MB for good.
func TestIdleHTTPSessionEnds(t *testing.T) {
	e := newEnv(t)
	mcpserver.SetSessionIdleTTL(e.srv, time.Second)
	ts := e.httpServer(t)
	bob := httpClient(t, ts.URL, userToken, clientOpts{legacy: true})
	id := call(t, bob, "plan", map[string]any{"plan": upperPlan("idle")})["run_id"].(string)
	subscribe(t, bob, runURI(id))
	if n := mcpserver.SubscriptionCount(e.srv); n != 1 {
		t.Fatalf("%d subscriptions, want 1", n)
	}
	testwait.Until(t, 20*time.Second, "the idle session to end", func() bool { return mcpserver.SubscriptionCount(e.srv) == 0 })
	// Its id is refused, so its client learns to initialize again (mcp-go
	// would serve it with a new, empty session).
	list := `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}`
	if status, _ := sessionRequest(t, ts.URL, userToken, bob.GetSessionId(), http.MethodPost, list); status != http.StatusNotFound {
		t.Fatalf("the ended session's id: %d, want 404", status)
	}
}

// sessionRequest sends one raw request on session sid under token and
// returns its status and body.
func sessionRequest(t *testing.T, url, token, sid, method, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}
