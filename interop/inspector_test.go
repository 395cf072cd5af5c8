package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/internal/npmtest"
)

// inspector runs the MCP Inspector's CLI (pinned in interop/inspector) with
// args, the way README's "Try it with the MCP Inspector" does, and decodes
// what it prints. It needs Node 22, which .ci/node22.sh provides.
func inspector(t *testing.T, env []string, args ...string) map[string]any {
	t.Helper()
	dir := npmtest.Install(t, filepath.Join(repoRoot, "interop", "inspector"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodeDir, err := exec.CommandContext(ctx, filepath.Join(repoRoot, ".ci", "node22.sh")).Output()
	if err != nil {
		t.Fatalf(".ci/node22.sh: %v", err)
	}
	node := filepath.Join(strings.TrimSpace(string(nodeDir)), "node")
	launcher := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	cmd := exec.CommandContext(ctx, node, append([]string{launcher, "--cli"}, args...)...)
	cmd.Dir, cmd.Env = repoRoot, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspector %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("inspector %v printed %q: %v", args, stdout.String(), err)
	}
	return out
}

// toolNames lists the tools of a tools/list answer.
func toolNames(out map[string]any) []string {
	var names []string
	tools, _ := out["tools"].([]any)
	for _, tool := range tools {
		if m, ok := tool.(map[string]any); ok {
			names = append(names, m["name"].(string))
		}
	}
	return names
}

// TestInspectorCLI drives `ordo serve` with the MCP Inspector's CLI as
// README shows: list the tools over stdio, execute the first-run plan and
// answer its two interrupts with approve (each call a new `ordo serve`
// over the same data directory, so the run resumes from the store), then
// list the tools over HTTP with a bearer token.
func TestInspectorCLI(t *testing.T) {
	needNode(t)
	t.Parallel()
	env := ordoEnv(t)
	ordo := filepath.Join(binDir, "ordo")
	names := strings.Join(toolNames(inspector(t, env, ordo, "serve", "--method", "tools/list")), " ")
	for _, want := range []string{"plan", "execute", "approve", "run_status"} {
		if !strings.Contains(" "+names+" ", " "+want+" ") {
			t.Errorf("tools/list over stdio: %s, want %s", names, want)
		}
	}

	plan, err := os.ReadFile(filepath.Join(repoRoot, "examples", "first-run.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, plan); err != nil {
		t.Fatal(err)
	}
	call := func(tool string, args ...string) map[string]any {
		t.Helper()
		out := inspector(t, env, append([]string{ordo, "serve", "--method", "tools/call", "--tool-name", tool, "--tool-arg"}, args...)...)
		result, _ := out["structuredContent"].(map[string]any)
		if result == nil || out["isError"] == true {
			t.Fatalf("%s %v: %v", tool, args, out)
		}
		return result
	}
	interrupt := func(r map[string]any) string {
		i, _ := r["interrupt"].(map[string]any)
		kind, _ := i["kind"].(string)
		return kind
	}
	run := call("execute", "plan="+compact.String())
	id, _ := run["run_id"].(string)
	if run["status"] != "interrupted" || interrupt(run) != "plan_approval" {
		t.Fatalf("execute: %v", run)
	}
	// The chat post asks for a person's confirmation (policy), after the plan's.
	if r := call("approve", "run_id="+id, "decision=approve"); r["status"] != "interrupted" || interrupt(r) != "step_approval" {
		t.Fatalf("approve (plan): %v", r)
	}
	if r := call("approve", "run_id="+id, "decision=approve"); r["status"] != "completed" {
		t.Fatalf("approve (step): %v", r)
	}

	const token = "inspector-token-3f9c2a61e8"
	s := serveHTTP(t, "ada", "user", token)
	names = strings.Join(toolNames(inspector(t, os.Environ(), s.url, "--header", "Authorization: Bearer "+token, "--method", "tools/list")), " ")
	if !strings.Contains(" "+names+" ", " execute ") {
		t.Errorf("tools/list over HTTP: %s", names)
	}
}
