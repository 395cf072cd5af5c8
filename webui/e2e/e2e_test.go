// Package e2e drives the web console of a real `ordo serve --http` in a
// real headless Chromium (Debian's chromium, driven by the pinned
// playwright-core in package.json).
package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/internal/npmtest"
	"github.com/ordo-run/ordo/internal/testbuild"
	"github.com/ordo-run/ordo/internal/testwait"
)

const chromium = "/usr/bin/chromium"

// Tokens of the two people: ada the admin, bob a user.
const (
	adaToken = "ada-console-e2e-token-0123456789"
	bobToken = "bob-console-e2e-token-0123456789"
)

// TestConsoleInChromium builds ordo with its bundled plugins and the
// example plugin, serves HTTP with two tokens, and runs console.mjs in
// Chromium against it (see that script for the steps). It writes the
// README's screenshots to $ORDO_SCREENSHOTS_DIR (docs/img to refresh
// them), else to a temporary directory.
func TestConsoleInChromium(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("skipped: %s is not installed (apt-get install -y chromium; CI installs it)", chromium)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not installed (this test runs playwright-core; CI has node and npm)", tool)
		}
	}
	root, err := testbuild.Root()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bin, hello := filepath.Join(tmp, "bin"), filepath.Join(tmp, "plugin-hello")
	if err := testbuild.Ordo(bin); err != nil {
		t.Fatal(err)
	}
	if err := testbuild.Build(hello, "./examples/plugin-hello"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(hello)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	scripts := npmtest.Install(t, filepath.Join(root, "webui", "e2e"))

	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	serve := exec.CommandContext(ctx, filepath.Join(bin, "ordo"), "serve", "--http", addr)
	serve.Dir = tmp
	serve.Env = []string{"HOME=" + tmp, "PATH=" + os.Getenv("PATH"), "ORDO_DATA_DIR=" + filepath.Join(tmp, "data"),
		"ORDO_HTTP_TOKENS=ada:admin:" + adaToken + ";bob:user:" + bobToken}
	var serverLog bytes.Buffer
	serve.Stdout, serve.Stderr = &serverLog, &serverLog
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = serve.Process.Signal(os.Interrupt)
		_ = serve.Wait()
		if t.Failed() {
			t.Logf("ordo serve log:\n%s", serverLog.String())
		}
	}()
	base := "http://" + addr
	waitHealthy(t, base)

	shots := os.Getenv("ORDO_SCREENSHOTS_DIR")
	if shots == "" {
		shots = t.TempDir()
	} else if !filepath.IsAbs(shots) {
		shots = filepath.Join(root, shots)
	}
	evil := httptest.NewServer(attackPages(base, signedIn(t, base, adaToken)))
	defer evil.Close()
	node := exec.CommandContext(ctx, "node", filepath.Join(scripts, "console.mjs"))
	node.Dir = scripts
	node.Env = append(os.Environ(), "ORDO_URL="+base, "ADA_TOKEN="+adaToken, "BOB_TOKEN="+bobToken, "EVIL_URL="+evil.URL,
		"HELLO_PATH="+hello, "HELLO_SHA256="+hex.EncodeToString(sum[:]), "SHOT_DIR="+shots)
	out, err := node.CombinedOutput()
	t.Logf("console.mjs:\n%s", out)
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("console.mjs: %v", err)
	}
	for _, shot := range []string{"console-run.png", "console-approval.png", "console-session.png"} {
		if fi, err := os.Stat(filepath.Join(shots, shot)); err != nil || fi.Size() < 10000 {
			t.Errorf("screenshot %s: %v", shot, err)
		}
	}
}

// attackPages is a site on another port of the console's host (cookies
// ignore ports; SameSite counts it as the same site) that tries to make
// its visitor act as ada: /login plants the sign-in form's CSRF cookie and
// posts a matching sign-in form with ada's token (login CSRF), /plant
// plants ada's session cookie at /ui/runs, which the browser sends before
// the visitor's own.
func attackPages(console, adaSession string) http.Handler {
	page := func(script, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><link rel="icon" href="data:,"><body>%s<script>%s</script></body>`, body, script)
		}
	}
	m := http.NewServeMux()
	m.Handle("/login", page(`document.cookie = "ordo_signin=planted0123456789; path=/ui"; document.forms[0].submit();`,
		`<form method="post" action="`+console+`/ui/signin"><input type="hidden" name="csrf" value="planted0123456789">`+
			`<input type="hidden" name="token" value="`+adaToken+`"></form>`))
	m.Handle("/plant", page(`document.cookie = "ordo_session=`+adaSession+`; path=/ui/runs"; document.title = "planted";`, "planted"))
	return m
}

// signedIn signs in to the console over plain HTTP and returns the
// session cookie's value.
func signedIn(t *testing.T, console, token string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.Get(console + "/ui/signin")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" content="([0-9a-f]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token on the sign-in page:\n%s", page)
	}
	if res, err = c.PostForm(console+"/ui/signin", url.Values{"csrf": {string(m[1])}, "token": {token}}); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	u, _ := url.Parse(console + "/ui/runs")
	for _, ck := range jar.Cookies(u) {
		if ck.Name == "ordo_session" {
			return ck.Value
		}
	}
	t.Fatalf("signing in gave no session cookie (%s)", res.Status)
	return ""
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitHealthy(t *testing.T, base string) {
	testwait.For(t, 30*time.Second, func() error {
		res, err := http.Get(base + "/healthz")
		if err != nil {
			return fmt.Errorf("ordo serve did not answer /healthz: %w", err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("ordo serve answered /healthz with %s", res.Status)
		}
		return nil
	})
}
