package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/internal/pgtest"
)

// Issue 8: two `ordo serve --http` processes on one Postgres database, A
// given it with --store (over ORDO_STORE=embedded), B with ORDO_STORE. A
// run is executed through A and stops for approval; every approval goes
// through B's MCP endpoint, and the run completes on B.
func TestTwoServersShareRuns(t *testing.T) {
	store, _ := pgtest.Database(t, "ordo_two_") // both servers migrate it at start, under the advisory lock
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	const token = "two-servers-token-0123456789"
	a := startServer(t, ctx, store, true, token)
	srvB := startServer(t, ctx, store, false, token)

	plan, err := os.ReadFile(filepath.Join(repoRoot, firstRun))
	if err != nil {
		t.Fatal(err)
	}
	out := callTool(t, ctx, a, token, "execute", map[string]any{"plan": json.RawMessage(plan)})
	if out["status"] != "interrupted" {
		t.Fatalf("A: status %v, want interrupted: %v", out["status"], out)
	}
	id, _ := out["run_id"].(string)
	for i := 0; out["status"] == "interrupted"; i++ {
		if i == 5 {
			t.Fatalf("still interrupted after %d approvals: %v", i, out)
		}
		out = callTool(t, ctx, srvB, token, "approve", map[string]any{"run_id": id, "decision": "approve"})
	}
	if out["status"] != "completed" || out["run_id"] != id {
		t.Fatalf("B: %v", out)
	}
}

// startServer runs `ordo serve --http` on a Postgres store (given with
// --store, else ORDO_STORE) with its own home and data directory (another
// machine) and returns its MCP URL.
func startServer(t *testing.T, ctx context.Context, store string, viaFlag bool, token string) string {
	return serve(t, ctx, serverSpec{store: store, viaFlag: viaFlag, token: token}).url
}

// serverSpec is one `ordo serve --http` process.
type serverSpec struct {
	store   string
	viaFlag bool   // the store given with --store (over ORDO_STORE=embedded), else in ORDO_STORE
	token   string // an admin bearer token
	config  string // more of ordo.yaml
	vars    []string
	// share, when set, is a directory holding what several servers share
	// besides the store: the plugin data (share/plugins, which the
	// server's <data_dir>/plugins links to) and the files root
	// (share/files).
	share string
}

type server struct {
	url string
	cmd *exec.Cmd
}

func serve(t *testing.T, ctx context.Context, spec serverSpec) server {
	t.Helper()
	e := newEnv(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte("http:\n  tokens:\n    - {name: ada, token_env: ADA_TOKEN, role: admin}\n"+spec.config), 0o600)
	args, vars := []string{"--config", cfg, "serve", "--http", "127.0.0.1:0"}, append(e.vars, "ADA_TOKEN="+spec.token)
	if spec.viaFlag {
		args, vars = append(args, "--store", spec.store), append(vars, "ORDO_STORE=embedded")
	} else {
		vars = append(vars, "ORDO_STORE="+spec.store)
	}
	if spec.share != "" {
		for _, d := range []string{e.data, filepath.Join(spec.share, "plugins"), filepath.Join(spec.share, "files")} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(filepath.Join(spec.share, "plugins"), filepath.Join(e.data, "plugins")); err != nil {
			t.Fatal(err)
		}
		vars = append(vars, "ORDO_FILES_ROOT="+filepath.Join(spec.share, "files"))
	}
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), args...)
	cmd.Dir, cmd.Env = repoRoot, append(vars, spec.vars...)
	addr, logs := listening(t, cmd)
	if strings.Contains(logs, spec.store) {
		t.Errorf("the store's DSN is logged:\n%s", logs)
	}
	return server{url: addr, cmd: cmd}
}

// listening starts cmd, an `ordo serve --http`, stops it when the test
// ends, and returns the MCP URL it logged and its log until then; the
// rest of its log is discarded.
func listening(t *testing.T, cmd *exec.Cmd) (url, logs string) {
	t.Helper()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	var b strings.Builder
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		var line struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving MCP over HTTP" {
			go io.Copy(io.Discard, stderr)
			return line.Addr, b.String()
		}
	}
	t.Fatalf("no listen address logged:\n%s", b.String())
	return "", ""
}

// callTool calls one tool on a fresh streamable HTTP client and returns
// its structured result.
func callTool(t *testing.T, ctx context.Context, mcpURL, token, name string, args map[string]any) map[string]any {
	t.Helper()
	out, err := tryTool(ctx, mcpURL, token, name, args)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tryTool is callTool for a call that may fail (its server killed).
func tryTool(ctx context.Context, mcpURL, token, name string, args map[string]any) (map[string]any, error) {
	c, err := httpSession(ctx, mcpURL, token)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", name, mcpURL, err)
	}
	data, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil || out == nil {
		return nil, fmt.Errorf("%s on %s: no structured result: %+v", name, mcpURL, res)
	}
	return out, nil
}
