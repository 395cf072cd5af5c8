package main_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/webui"
)

// TestConsoleServed: `ordo serve --http` serves the web console at /ui on
// the MCP listener, with its CSP; the configured token signs in; the admin
// page shows the running configuration as `config show` does (the token's
// variable named, no secret).
func TestConsoleServed(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const token = "console-admin-token-0123456789"
	_, mcpURL := serveHTTP(t, ctx, token, "")
	base := strings.TrimSuffix(mcpURL, "/mcp")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) (*http.Response, string) {
		res, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}
	res, body := get("/ui")
	if res.Request.URL.Path != "/ui/signin" || res.Header.Get("Content-Security-Policy") != webui.CSP {
		t.Fatalf("/ui led to %s, CSP %q", res.Request.URL, res.Header.Get("Content-Security-Policy"))
	}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(body)
	if csrf == nil {
		t.Fatalf("no CSRF field:\n%s", body)
	}
	res, err := c.PostForm(base+"/ui/signin", url.Values{"csrf": {csrf[1]}, "token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Request.URL.Path != "/ui/runs" {
		t.Fatalf("sign-in led to %s (%s)", res.Request.URL, res.Status)
	}
	res, body = get("/ui/admin")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "token_env: ADA_TOKEN") || strings.Contains(body, token) ||
		!strings.Contains(body, "text") {
		t.Fatalf("admin page %s:\n%s", res.Status, body)
	}
	if res, _ := get("/healthz"); res.StatusCode != http.StatusOK {
		t.Errorf("/healthz beside the console: %s", res.Status)
	}
}
