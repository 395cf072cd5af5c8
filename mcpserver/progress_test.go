package mcpserver_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/internal/testmcp"
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
