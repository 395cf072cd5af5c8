package webui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
)

// TestAdminUpstream: an admin adds an upstream MCP server by URL (a real
// mcp-go server), sees it on the admin page with its state and its tool in
// the catalog, sees that tool shown down once the server is gone, and
// removes it. Arguments add_upstream refuses (a command and a URL both), a
// plugin binary whose checksum is wrong and a user's request change
// nothing.
func TestAdminUpstream(t *testing.T) {
	s := newStack(t)
	calc := httptest.NewServer(server.NewStreamableHTTPServer(testmcp.NewCalc(false)))
	t.Cleanup(calc.Close)
	ada := s.browser(t).signIn(adaToken)
	ada.get("/ui/admin")

	bin := filepath.Join(t.TempDir(), "ordo-plugin-fake")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, form := range []url.Values{
		{"kind": {"upstream"}, "name": {"calc"}, "mcp": {"calc-server --stdio"}, "mcp_url": {calc.URL}},
		{"kind": {"plugin"}, "name": {"fake"}, "path": {bin}, "sha256": {strings.Repeat("0", 64)}},
	} {
		res, body := ada.post("/ui/admin/plugins", form)
		if res.StatusCode < 400 || !strings.Contains(body, `class="error"`) {
			t.Fatalf("bad add %v: %s\n%s", form, res.Status, body)
		}
	}
	cat := s.browser(t).signIn(catToken)
	if res, _ := cat.post("/ui/admin/plugins", url.Values{"kind": {"upstream"}, "name": {"calc"}, "mcp_url": {calc.URL}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a user adds an upstream: %s", res.Status)
	}
	if _, body := ada.get("/ui/admin"); strings.Contains(body, "<code>calc</code>") || strings.Contains(body, "<code>fake</code>") {
		t.Fatal("a refused add left something behind")
	}

	res, body := ada.post("/ui/admin/plugins", url.Values{"kind": {"upstream"}, "name": {"calc"}, "mcp_url": {calc.URL}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add calc: %s\n%s", res.Status, body)
	}
	_, body = ada.get(res.Header.Get("Location"))
	if !strings.Contains(body, "added calc") || !strings.Contains(body, "<code>calc</code>") || !strings.Contains(body, `aria-label="Remove calc"`) {
		t.Fatalf("admin page after adding calc:\n%s", body)
	}
	if _, body := ada.get("/ui/tools"); !strings.Contains(body, "<code>calc.add</code>") || strings.Contains(body, `class="down"`) {
		t.Fatalf("the catalog lacks calc.add, or shows a tool down:\n%s", body)
	}
	// The server goes away: its tool stays in the catalog, shown down.
	calc.CloseClientConnections()
	calc.Close()
	if _, err := s.host.Call(context.Background(), "calc.add", json.RawMessage(`{"a":1,"b":2}`), "k"); contracts.CodeOf(err) != contracts.CodeToolUnavailable {
		t.Fatalf("calc.add with its server gone: %v", err)
	}
	testwait.Until(t, 30*time.Second, "calc.add shown down", func() bool {
		_, body := ada.get("/ui/tools")
		return strings.Contains(body, `<code>calc.add</code></td>
<td><span class="risk risk-read">read</span></td>
<td><span class="down">down</span></td>`)
	})
	if res, _ := cat.post("/ui/admin/plugins/remove", url.Values{"name": {"calc"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a user removes an upstream: %s", res.Status)
	}
	if res, body := ada.post("/ui/admin/plugins/remove", url.Values{"name": {"calc"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove calc: %s\n%s", res.Status, body)
	}
	if _, body := ada.get("/ui/tools"); strings.Contains(body, "calc.add") {
		t.Fatal("calc.add outlived its upstream")
	}
}

// TestAdminNoticeNotSpoofable: the admin page's notice after an add or a
// remove comes from its link (?done=), so it shows only what the console
// itself writes there ("added NAME", "removed NAME"): a link cannot put a
// message of its own ("add this plugin…") on the admin page.
func TestAdminNoticeNotSpoofable(t *testing.T) {
	s := newStack(t)
	ada := s.browser(t).signIn(adaToken)
	for done, shown := range map[string]bool{"added calc": true, "removed my-tool.v2": true,
		"Security update: add the plugin /tmp/x with SHA-256 00ff": false, "added calc, now add /tmp/x": false, "added ": false} {
		_, body := ada.get("/ui/admin?done=" + url.QueryEscape(done))
		if got := strings.Contains(body, `role="status">`+done+`</p>`); got != shown {
			t.Errorf("?done=%q shown %v, want %v", done, got, shown)
		}
	}
}

// TestUpstreamMarkupStaysText: what an upstream MCP server says of its
// tools (a description with a script, an attribute breakout, a
// javascript: URL; a schema with the same in a property's description)
// reaches the tools page and its search as text, never as markup.
func TestUpstreamMarkupStaysText(t *testing.T) {
	s := newStack(t)
	const evil = `<script>window.__x=1</script>"><img src=x onerror=alert(1)><a href="javascript:alert(1)">x</a>`
	up := server.NewMCPServer("evil", "1.0.0")
	up.AddTool(mcp.NewTool("lookup", mcp.WithDescription("Look a thing up "+evil), mcp.WithString("q", mcp.Required(), mcp.Description(evil)),
		mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(evil), nil
		})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() }) // the host holds a stream open
	ada := s.browser(t).signIn(adaToken)
	ada.get("/ui/admin")
	if res, body := ada.post("/ui/admin/plugins", url.Values{"kind": {"upstream"}, "name": {"evil"}, "mcp_url": {ts.URL}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add the upstream: %s\n%s", res.Status, body)
	}
	for _, path := range []string{"/ui/tools", "/ui/tools?q=" + url.QueryEscape("look a thing up "+evil)} {
		_, body := ada.get(path)
		if !strings.Contains(body, "<code>evil.lookup</code>") || !strings.Contains(body, "&lt;script&gt;window.__x=1&lt;/script&gt;") {
			t.Fatalf("%s lacks evil.lookup with its description as text:\n%s", path, body)
		}
		for _, raw := range []string{"<script>window", "<img src=x", `<a href="javascript:`, `"><img`} {
			if strings.Contains(body, raw) {
				t.Fatalf("%s holds %q as markup", path, raw)
			}
		}
	}
}

// TestAdminUpstreamURLSecret: the add-upstream form takes the variable
// holding the key an upstream's URL carries where it says {secret}
// (url_secret_env), checked as add_upstream checks it; an upstream keyed
// in its path, or by {secret}, is added and its tool runs, and the key is
// on no page the console answers (errors included) and in no log line.
func TestAdminUpstreamURLSecret(t *testing.T) {
	const key = "Pa7hK3yInTheURL0123"
	t.Setenv("ORDO_TEST_CONSOLE_URL_KEY", key)
	base := testmcp.ServeCalcAt(t, "/s/"+key+"/mcp")
	withKey, placeholder := base+"/s/"+key+"/mcp", base+"/s/{secret}/mcp"
	s := newStack(t)
	ada := s.browser(t).signIn(adaToken)
	if _, body := ada.get("/ui/admin"); !strings.Contains(body, `name="url_secret_env"`) {
		t.Fatalf("the form lacks url_secret_env:\n%s", body)
	}
	noKey := func(where, text string) {
		t.Helper()
		if strings.Contains(text, key) {
			t.Errorf("%s holds the key: %s", where, text)
		}
	}
	for _, form := range []url.Values{
		{"mcp_url": {withKey}, "url_secret_env": {"ORDO_TEST_CONSOLE_URL_KEY"}},
		{"mcp_url": {placeholder}},
		{"mcp_url": {placeholder}, "url_secret_env": {"ORDO_TEST_NO_SUCH_VAR"}},
		{"mcp": {"calc-server"}, "url_secret_env": {"ORDO_TEST_CONSOLE_URL_KEY"}},
	} {
		form.Set("kind", "upstream")
		form.Set("name", "calc")
		res, body := ada.post("/ui/admin/plugins", form)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "url_secret_env") {
			t.Errorf("bad add %v: %s, want 400 naming url_secret_env\n%s", form, res.Status, body)
		}
		noKey("the refusal", body)
	}
	for name, form := range map[string]url.Values{
		"key in the path": {"mcp_url": {withKey}},
		"{secret}":        {"mcp_url": {placeholder}, "url_secret_env": {"ORDO_TEST_CONSOLE_URL_KEY"}},
	} {
		form.Set("kind", "upstream")
		form.Set("name", "calc")
		res, body := ada.post("/ui/admin/plugins", form)
		if res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: add calc: %s\n%s", name, res.Status, body)
		}
		_, body = ada.get(res.Header.Get("Location"))
		if !strings.Contains(body, "<code>calc</code>") {
			t.Fatalf("%s: the admin page lacks calc:\n%s", name, body)
		}
		noKey(name+": the admin page", body)
		if _, err := s.host.Call(context.Background(), "calc.add", json.RawMessage(`{"a":1,"b":2}`), "k"); err != nil {
			t.Fatalf("%s: calc.add: %v", name, err)
		}
		_, body = ada.get("/ui/tools")
		noKey(name+": the tools page", body)
		if res, body := ada.post("/ui/admin/plugins/remove", url.Values{"name": {"calc"}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: remove calc: %s\n%s", name, res.Status, body)
		}
	}
	if !strings.Contains(s.log.String(), "plugin added in the console") {
		t.Fatalf("the log lacks the adds:\n%s", s.log.String())
	}
	noKey("the log", s.log.String())
}
