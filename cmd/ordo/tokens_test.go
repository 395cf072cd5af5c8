package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/internal/testmcp"
)

// printedToken is what `ordo tokens new` printed: the token, the
// configuration lines, the line setting the variable they name, and the
// ORDO_HTTP_TOKENS line (as VAR=VALUE).
type printedToken struct {
	token, config, varLine, envLine string
}

func tokensNew(t *testing.T, e *env, args ...string) printedToken {
	t.Helper()
	r := e.ordo("", append([]string{"tokens", "new"}, args...)...)
	r.want(t, 0)
	lines := strings.Split(r.stdout, "\n")
	p := printedToken{token: lines[1]}
	var cfg []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "http:"), strings.HasPrefix(l, "  "):
			cfg = append(cfg, l)
		case strings.HasPrefix(l, "export ORDO_HTTP_TOKENS="):
			p.envLine = strings.Trim(strings.TrimPrefix(l, "export "), "'")
			p.envLine = strings.Replace(p.envLine, "='", "=", 1)
		case strings.HasPrefix(l, "export "):
			p.varLine = strings.TrimPrefix(l, "export ")
		}
	}
	p.config = strings.Join(cfg, "\n") + "\n"
	if len(p.token) < 16 || p.envLine == "" || p.varLine == "" || !strings.Contains(p.config, "token_env:") {
		t.Fatalf("tokens new printed:\n%s", r.stdout)
	}
	return p
}

// TestServeHTTPNeedsAToken: `serve --http` without a token refuses to
// start, saying how to make one; `ordo tokens new` prints a random token
// and lines that work as printed, both the configuration lines and the
// ORDO_HTTP_TOKENS line, with the role asked for.
func TestServeHTTPNeedsAToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "serve", "--http", "127.0.0.1:0")
	r.want(t, 2)
	for _, s := range []string{"error 1014", "http.tokens", "ORDO_HTTP_TOKENS", "ordo tokens new NAME"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("serve --http without tokens: stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	alice, ops := tokensNew(t, e, "alice"), tokensNew(t, e, "ops", "--admin")
	if alice.token == ops.token || !strings.Contains(alice.config, "role: user") || !strings.Contains(ops.envLine, "ops:admin:") {
		t.Fatalf("tokens: %+v %+v", alice, ops)
	}
	e.ordo("", "tokens", "new", "no:colons").want(t, 2)

	// The environment line alone: ops is an admin (sees the admin tools).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := serveHTTPWith(t, ctx, e, nil, ops.envLine)
	if tools := mcpTools(t, ctx, url, ops.token); !slices.Contains(tools, "list_plugins") {
		t.Errorf("the admin token does not see the admin tools: %v", tools)
	}
	// The configuration lines, the token in the variable they name: alice
	// is a user (no admin tools).
	cfg := filepath.Join(e.home, "tokens.yaml")
	os.WriteFile(cfg, []byte(alice.config), 0o600)
	url = serveHTTPWith(t, ctx, e, []string{"--config", cfg}, alice.varLine)
	if tools := mcpTools(t, ctx, url, alice.token); len(tools) == 0 || slices.Contains(tools, "list_plugins") {
		t.Errorf("the user token's tools: %v", tools)
	}
	// A bad ORDO_HTTP_TOKENS stops the server, naming the variable and
	// never echoing the token.
	e.vars = append(e.vars, "ORDO_HTTP_TOKENS=alice:root:"+alice.token)
	r = e.ordo("", "serve", "--http", "127.0.0.1:0")
	r.want(t, 2)
	if !strings.Contains(r.stderr, "ORDO_HTTP_TOKENS") || strings.Contains(r.stderr, alice.token) {
		t.Errorf("bad ORDO_HTTP_TOKENS:\n%s", r.stderr)
	}
}

// serveHTTPWith starts `ordo [args] serve --http 127.0.0.1:0` with extra
// variables and returns its MCP URL; it is stopped when the test ends.
func serveHTTPWith(t *testing.T, ctx context.Context, e *env, args []string, vars ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), append(args, "serve", "--http", "127.0.0.1:0")...)
	cmd.Dir, cmd.Env = repoRoot, append(append([]string{}, e.vars...), vars...)
	url, _ := listening(t, cmd)
	return url
}

// mcpTools lists the tools the MCP server at url shows the token's user.
func mcpTools(t *testing.T, ctx context.Context, url, token string) []string {
	t.Helper()
	c, err := httpSession(ctx, url, token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return testmcp.ToolNames(t, c)
}
