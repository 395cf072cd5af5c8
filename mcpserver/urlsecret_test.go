package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/syncbuf"
	"github.com/ordo-run/ordo/internal/testmcp"
)

// urlKey is the key keyedUpstream's path carries; wrongKey is another.
const (
	urlKey   = "Kq7vZ2mPx9LbT4wR8nYc"
	wrongKey = "Wr0ngK3yWr0ngK3yWr0n"
)

// keyedUpstream serves calc only under /s/urlKey/mcp; it returns the
// URL with the key in place and with {secret} for it.
func keyedUpstream(t *testing.T) (withKey, placeholder string) {
	base := testmcp.ServeCalcAt(t, "/s/"+urlKey+"/mcp")
	return base + "/s/" + urlKey + "/mcp", base + "/s/" + host.URLSecretPlaceholder + "/mcp"
}

// noKey fails t if what holds urlKey or wrongKey.
func noKey(t *testing.T, where string, what any) {
	t.Helper()
	text, ok := what.(string)
	if !ok {
		data, err := json.Marshal(what)
		if err != nil {
			t.Fatal(err)
		}
		text = string(data)
	}
	for _, k := range []string{urlKey, wrongKey} {
		if strings.Contains(text, k) {
			t.Errorf("%s holds the key %s: %s", where, k, text)
		}
	}
}

// An upstream whose URL carries a key, given in the path or as {secret}
// with url_secret_env naming the server's variable that holds it, is
// added by add_upstream and answers a plan; the key is in no answer, no
// error, no listing and no log line. url_secret_env is checked as the
// configuration checks it: 1000 naming the argument, nothing added.
func TestAddUpstreamURLSecret(t *testing.T) {
	t.Setenv("ORDO_TEST_URL_KEY", urlKey)
	t.Setenv("ORDO_TEST_WRONG_KEY", wrongKey)
	withKey, placeholder := keyedUpstream(t)
	var log syncbuf.Buffer
	e := newEnv(t, withLog(&log))
	admin := httpClient(t, e.httpServer(t).URL, adminToken, clientOpts{})

	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"no {secret} in the URL", map[string]any{"mcp_url": withKey, "url_secret_env": "ORDO_TEST_URL_KEY"}},
		{"{secret} without url_secret_env", map[string]any{"mcp_url": placeholder}},
		{"unset variable", map[string]any{"mcp_url": placeholder, "url_secret_env": "ORDO_TEST_NO_SUCH_VAR"}},
		{"stdio", map[string]any{"mcp": "calc-server", "url_secret_env": "ORDO_TEST_URL_KEY"}},
	} {
		tc.args["name"] = "calc"
		code, body := toolError(t, admin, "add_upstream", tc.args)
		if details, _ := body["details"].(map[string]any); code != contracts.CodeInvalidInput || details["field"] != "url_secret_env" {
			t.Errorf("%s: code %d, want %d naming url_secret_env: %v", tc.name, code, contracts.CodeInvalidInput, body)
		}
		noKey(t, tc.name, body)
	}
	code, body := toolError(t, admin, "add_upstream", map[string]any{"name": "calc", "mcp_url": placeholder, "url_secret_env": "ORDO_TEST_WRONG_KEY"})
	if code != contracts.CodePluginRefused {
		t.Errorf("a wrong key: code %d, want %d: %v", code, contracts.CodePluginRefused, body)
	}
	noKey(t, "a wrong key's error", body)
	if n := len(e.host.Sources()); n != 1 {
		t.Fatalf("refused adds left %d sources, want only the test tools", n)
	}

	for name, args := range map[string]map[string]any{
		"key in the path": {"mcp_url": withKey},
		"{secret}":        {"mcp_url": placeholder, "url_secret_env": "ORDO_TEST_URL_KEY"},
	} {
		args["name"] = "calc"
		out := call(t, admin, "add_upstream", args)
		if out["added"] != "calc" {
			t.Fatalf("%s: add_upstream %v", name, out)
		}
		noKey(t, name+": add_upstream's answer", out)
		ran := call(t, admin, "execute", map[string]any{"plan": addPlan(2, 3), "options": map[string]any{"auto_approve": true}})
		if ran["status"] != "completed" {
			t.Fatalf("%s: a plan on the upstream: %v", name, ran)
		}
		noKey(t, name+": the run", ran)
		listed := call(t, admin, "list_plugins", map[string]any{})
		if !strings.Contains(fmt.Sprint(listed), host.HiddenURLPart) && name == "key in the path" {
			t.Errorf("%s: list_plugins does not show the key hidden: %v", name, listed)
		}
		noKey(t, name+": list_plugins", listed)
		noKey(t, name+": the host's sources", e.host.Sources())
		noKey(t, name+": the host's upstreams", e.host.Upstreams())
		call(t, admin, "remove_plugin", map[string]any{"name": "calc"})
	}
	if !strings.Contains(log.String(), "upstream added over MCP") {
		t.Fatalf("the log lacks the adds:\n%s", log.String())
	}
	noKey(t, "the log", log.String())
}

// Over stdio, add_upstream's question shows the URL as Ordo shows URLs:
// a key in its path HIDDEN, {secret} and the variable's name kept, never
// the key.
func TestStdioAdminQuestionHidesURLKey(t *testing.T) {
	t.Setenv("ORDO_TEST_URL_KEY", urlKey)
	withKey, placeholder := keyedUpstream(t)
	shown := strings.Replace(withKey, urlKey, host.HiddenURLPart, 1)
	for name, tc := range map[string]struct {
		args map[string]any
		want []string
	}{
		"key in the path": {map[string]any{"mcp_url": withKey}, []string{shown}},
		"{secret}":        {map[string]any{"mcp_url": placeholder, "url_secret_env": "ORDO_TEST_URL_KEY"}, []string{placeholder, "ORDO_TEST_URL_KEY"}},
	} {
		t.Run(name, func(t *testing.T) {
			var log syncbuf.Buffer
			e := newEnv(t, withLog(&log))
			h := &elicitor{answer: func(mcp.ElicitationParams) *mcp.ElicitationResult {
				return accept(map[string]any{"decision": "approve"})
			}}
			c := e.stdioClient(t, clientOpts{opts: []client.ClientOption{client.WithElicitationHandler(h)}})
			tc.args["name"] = "calc"
			out := call(t, c, "add_upstream", tc.args)
			if _, ok := e.host.Lookup("calc.add"); !ok || out["added"] != "calc" {
				t.Fatalf("approved: %v", out)
			}
			noKey(t, "the answer", out)
			h.mu.Lock()
			msg := h.seen[0].Message
			h.mu.Unlock()
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("question %q lacks %q", msg, want)
				}
			}
			noKey(t, "the question", msg)
			noKey(t, "the log", log.String())
		})
	}
}
