package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// deepPlan is an "execute" plan whose inputs nest depth levels deep.
func deepPlan(depth int) map[string]any {
	var v any = "x"
	for range depth {
		v = []any{v}
	}
	p := upperPlan("deep")
	p["actions"].([]any)[0].(map[string]any)["inputs"] = map[string]any{"text": v}
	return p
}

// TestDeepJSONRefused: a message nested deeper than contracts.MaxJSONDepth
// is refused with 1016 before mcp-go decodes it — over HTTP as a 400, over
// stdio as a JSON-RPC error — and the server goes on serving.
func TestDeepJSONRefused(t *testing.T) {
	e := newEnv(t)
	ts := e.httpServer(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"plan":` +
		strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000) + `}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+userToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var refusal struct {
		ID    int
		Error struct {
			Code    int
			Message string
			Data    contracts.Error
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&refusal)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusBadRequest || refusal.ID != 1 || refusal.Error.Code != -32600 ||
		refusal.Error.Data.Code != contracts.CodeJSONTooDeep || !strings.Contains(refusal.Error.Message, "deeper than 64") {
		t.Fatalf("status %d, %+v, %v", resp.StatusCode, refusal, err)
	}
	c := httpClient(t, ts.URL, userToken, clientOpts{})
	if _, err := callRaw(c, "execute", map[string]any{"plan": deepPlan(contracts.MaxJSONDepth)}, nil); err == nil ||
		!strings.Contains(err.Error(), "1016") {
		t.Fatalf("HTTP client, deep plan: %v", err)
	}
	if out := call(t, c, "plan", map[string]any{"plan": upperPlan("shallow")}); out["run_id"] == nil {
		t.Fatalf("after the refusal: %v", out)
	}

	s := e.stdioClient(t, clientOpts{})
	if _, err := callRaw(s, "execute", map[string]any{"plan": deepPlan(5000)}, nil); err == nil ||
		!strings.Contains(err.Error(), "ordo 1016: JSON nests deeper than 64 levels") {
		t.Fatalf("stdio, deep plan: %v", err)
	}
	if out := call(t, s, "plan", map[string]any{"plan": upperPlan("shallow")}); out["run_id"] == nil {
		t.Fatalf("stdio, after the refusal: %v", out)
	}
}
