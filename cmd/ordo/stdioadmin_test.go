package main_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/internal/testmcp"
)

// serveStdio starts `ordo --config FILE serve` (FILE holding config) and
// connects an mcp-go client with opts, as an IDE would.
func serveStdio(t *testing.T, e *env, config string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	cfg := filepath.Join(e.home, "ordo.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(e.home, "serve.log")
	logs, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		logs.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("ordo serve log:\n%s", b)
		}
	})
	tr := transport.NewStdioWithOptions(filepath.Join(binDir, "ordo"), append(e.vars, "ORDO_EXPOSE_TOOLS=true"), []string{"--config", cfg, "serve"},
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env, cmd.Dir, cmd.Stderr = env, repoRoot, logs
			return cmd, nil
		}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Start, not the transport's own, so the client serves the server's
	// requests (elicitation) too.
	c := client.NewClient(tr, opts...)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(ctx, initRequest()); err != nil {
		t.Fatal(err)
	}
	return c
}

func callAdmin(t *testing.T, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	body, _ := json.Marshal(res)
	return res, string(body), err
}

// Issue 13: the stdio client of `ordo serve` is not offered the admin
// tools unless mcp.stdio_admin is on; a call is refused with 2003 saying
// how to turn them on, and nothing runs.
func TestServeStdioAdminToolsOffByDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := serveStdio(t, e, "")
	names := testmcp.ToolNames(t, c)
	for _, tool := range []string{"add_plugin", "add_upstream", "remove_plugin", "list_plugins"} {
		if slices.Contains(names, tool) {
			t.Errorf("the stdio client is offered %s", tool)
		}
	}
	marker := filepath.Join(e.home, "started")
	_, body, err := callAdmin(t, c, "add_upstream", map[string]any{"name": "evil", "command": []any{"/bin/sh", "-c", "touch " + marker}})
	if err == nil || !strings.Contains(err.Error(), "ordo 2003") || !strings.Contains(err.Error(), "mcp.stdio_admin: true") {
		t.Fatalf("add_upstream on stdio: %v %s", err, body)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the command ran (%v)", err)
	}
}

// With mcp.stdio_admin: true the admin tools are offered, and each
// add_upstream and add_plugin asks the person, showing exactly what would
// run: declined, nothing is added; approved, it is.
func TestServeStdioAdminAsksThePerson(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var asked []string
	answer := "decline"
	h := elicitFunc(func(p mcp.ElicitationParams) *mcp.ElicitationResult {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, p.Message)
		if answer == "decline" {
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}
		}
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
			Content: map[string]any{"decision": answer}}}
	})
	c := serveStdio(t, e, "mcp:\n  stdio_admin: true\n", client.WithElicitationHandler(h))
	names := testmcp.ToolNames(t, c)
	for _, tool := range []string{"add_plugin", "add_upstream", "remove_plugin", "list_plugins"} {
		if !slices.Contains(names, tool) {
			t.Errorf("tools %v lack %s", names, tool)
		}
	}
	inner := "'" + filepath.Join(binDir, "ordo") + "' serve"
	setAnswer := func(a string) { mu.Lock(); answer = a; mu.Unlock() }
	lastAsked := func() string { mu.Lock(); defer mu.Unlock(); return asked[len(asked)-1] }

	for _, a := range []string{"decline", "reject"} {
		setAnswer(a)
		res, body, err := callAdmin(t, c, "add_upstream", map[string]any{"name": "inner", "mcp": inner})
		if err != nil || !res.IsError || !strings.Contains(body, "5004") {
			t.Fatalf("%s add_upstream: %v %s", a, err, body)
		}
		if _, body, _ := callAdmin(t, c, "list_plugins", map[string]any{}); strings.Contains(body, `"inner"`) {
			t.Fatalf("%s, yet inner was added: %s", a, body)
		}
	}
	if q := lastAsked(); !strings.Contains(q, `["`+filepath.Join(binDir, "ordo")+`","serve"]`) {
		t.Errorf("the question does not show the program and arguments: %q", q)
	}
	setAnswer("approve")
	res, body, err := callAdmin(t, c, "add_upstream", map[string]any{"name": "inner", "mcp": inner})
	if err != nil || res.IsError || !strings.Contains(body, `"inner.list_runs"`) {
		t.Fatalf("approved add_upstream: %v %s", err, body)
	}
	if res, body, err = callAdmin(t, c, "call_tool", map[string]any{"tool": "inner.list_runs", "arguments": map[string]any{}}); err != nil || res.IsError {
		t.Errorf("call_tool inner.list_runs: %v %s", err, body)
	}
	if res, body, err = callAdmin(t, c, "remove_plugin", map[string]any{"name": "inner"}); err != nil || res.IsError || strings.Contains(body, `"inner.list_runs"`) {
		t.Errorf("remove_plugin inner: %v %s", err, body)
	}

	// add_plugin shows the executable and the checksum it pins.
	data, err := os.ReadFile(hello)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256(data)
	sum := hex.EncodeToString(digest[:])
	setAnswer("decline")
	if res, body, err = callAdmin(t, c, "add_plugin", map[string]any{"name": "hello", "path": hello}); err != nil || !res.IsError || !strings.Contains(body, "5004") {
		t.Fatalf("declined add_plugin: %v %s", err, body)
	}
	if q := lastAsked(); !strings.Contains(q, hello) || !strings.Contains(q, sum) {
		t.Errorf("the question does not show the path and checksum: %q", q)
	}
	setAnswer("approve")
	if res, body, err = callAdmin(t, c, "add_plugin", map[string]any{"name": "hello", "path": hello}); err != nil || res.IsError || !strings.Contains(body, `"added":"hello"`) {
		t.Fatalf("approved add_plugin: %v %s", err, body)
	}
}

type elicitFunc func(mcp.ElicitationParams) *mcp.ElicitationResult

func (f elicitFunc) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(req.Params), nil
}
