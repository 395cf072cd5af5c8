package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/internal/testwait"
)

// TestServePicksUpSavedUpstream: a running `ordo serve` with no config
// file mounts the upstream `ordo plugins add --mcp … --save` writes to the
// default configuration file (created, the name made from the command),
// and unmounts it when `ordo plugins remove` deletes the entry; no
// restart. The upstream is another ordo serving MCP over stdio.
func TestServePicksUpSavedUpstream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	xdg := filepath.Join(e.home, "xdg")
	e.vars = append(e.vars, "XDG_CONFIG_HOME="+xdg, "ORDO_EXPOSE_TOOLS=true")
	file := filepath.Join(xdg, "ordo", "ordo.yaml")

	logs, err := os.Create(filepath.Join(e.home, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		logs.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logs.Name())
			t.Logf("ordo serve log:\n%s", b)
		}
	})
	tr := transport.NewStdioWithOptions(filepath.Join(binDir, "ordo"), e.vars, []string{"serve"},
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env, cmd.Dir, cmd.Stderr = env, repoRoot, logs
			return cmd, nil
		}))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := client.NewClient(tr)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(ctx, initRequest()); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(testmcp.ToolNames(t, c), "ordo__list_runs") {
		t.Fatal("the upstream is there before it was added")
	}

	r := e.ordo("", "plugins", "add", "--mcp", filepath.Join(binDir, "ordo")+" serve", "--save")
	r.want(t, 0)
	if !strings.Contains(r.stdout, "saved to "+file) || !strings.Contains(r.stdout, "ordo.list_runs") {
		t.Errorf("plugins add --save:\n%s", r.stdout)
	}
	if saved, _ := os.ReadFile(file); !strings.Contains(string(saved), "name: ordo") {
		t.Fatalf("default config file:\n%s", saved)
	}
	waitForTool(t, c, "ordo__list_runs", true)
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "ordo__list_runs", Arguments: map[string]any{}}})
	if err != nil || res.IsError {
		t.Fatalf("calling the picked-up upstream's tool: %v %+v", err, res)
	}

	e.ordo("", "plugins", "remove", "ordo").want(t, 0)
	waitForTool(t, c, "ordo__list_runs", false)
}

// waitForTool polls the server's tool list until name is (or is not) in
// it; ctx bounds the wait.
func waitForTool(t *testing.T, c *client.Client, name string, present bool) {
	t.Helper()
	testwait.Until(t, 2*time.Minute, fmt.Sprintf("tool %s present=%v", name, present), func() bool {
		return slices.Contains(testmcp.ToolNames(t, c), name) == present
	})
}
