package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testmcp"
)

// TestGoalPlannedByModel: with an OpenAI-compatible endpoint configured
// (here a scripted local server), `ordo run "goal"` plans with the model,
// executes and composes: two model calls. The API key is never logged,
// even at debug level.
func TestGoalPlannedByModel(t *testing.T) {
	t.Parallel()
	const key = "sk-test-DO-NOT-LOG-4242"
	e := newEnv(t)
	srv := e.withModel(
		llmtest.Reply{Role: "planner", Content: widgetPlan},
		llmtest.Reply{Role: "composer", Content: "Widgets sold in six rows of Q1."})
	e.vars = append(e.vars, "OPENAI_API_KEY="+key, "ORDO_LOG_LEVEL=debug") // over withModel's key: the last value counts
	r := e.ordo("", "run", "List the widget sales", "--json")
	run := r.wantRun(t, 0)
	if run.LLMCalls["planner"] != 1 || run.LLMCalls["composer"] != 1 || run.Result.Answer != "Widgets sold in six rows of Q1." {
		t.Errorf("llm calls %v, answer %q", run.LLMCalls, run.Result.Answer)
	}
	var records []map[string]string
	_ = json.Unmarshal(run.State["records"], &records)
	if len(records) != 6 {
		t.Errorf("records: %s", run.State["records"])
	}
	if reqs := srv.Requests(); len(reqs) != 2 || reqs[0].Model != "test-model" {
		t.Errorf("model requests: %+v", reqs)
	}
	if strings.Contains(r.stderr, key) || strings.Contains(r.stdout, key) {
		t.Error("the API key appears in the output")
	}
	// Without a model, a goal cannot be planned: a coded error says so.
	e2 := newEnv(t)
	r = e2.ordo("", "run", "List the widget sales")
	if r.code == 0 || !strings.Contains(r.stderr, "error 4004") {
		t.Errorf("no model: exit %d\n%s", r.code, r.stderr)
	}
}

// TestCtrlCLeavesResumableRun: SIGINT while the run waits at the chat
// post's confirmation stops it there (exit 3); `runs resume` finishes it.
func TestCtrlCLeavesResumableRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "run", "--plan", firstRun, "--json")
	cmd.Dir, cmd.Env = repoRoot, e.vars
	stdin, _ := cmd.StdinPipe()
	stdout, stderr := started(t, cmd)
	sc := bufio.NewScanner(stderr)
	sc.Split(scanPrompts)
	var seen strings.Builder
	for sc.Scan() {
		seen.WriteString(sc.Text())
		if strings.Contains(sc.Text(), "approve the plan?") {
			io.WriteString(stdin, "approve\n")
		}
		if strings.Contains(sc.Text(), "run post_link (chat.post_message)?") {
			cmd.Process.Signal(os.Interrupt)
			break
		}
	}
	go io.Copy(&seen, stderr)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v\n%s", err, seen.String())
	}
	var run contracts.Run
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		t.Fatal(err)
	}
	if run.Status != contracts.RunInterrupted || run.Interrupt.Kind != contracts.InterruptStepApproval {
		t.Fatalf("status %s, interrupt %+v", run.Status, run.Interrupt)
	}
	r := e.ordo("approve\n", "runs", "resume", run.ID, "--json")
	r.want(t, 0)
	if got := r.run(t); got.Status != contracts.RunCompleted {
		t.Errorf("after resume: %s", got.Status)
	}
}

// scanPrompts splits on newlines and on the "> " that ends a prompt, which
// has no newline.
func scanPrompts(data []byte, atEOF bool) (int, []byte, error) {
	for i := 0; i < len(data); i++ {
		if data[i] == '\n' || (data[i] == '>' && i+1 < len(data) && data[i+1] == ' ') {
			return i + 1, data[:i+1], nil
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// TestServeStdio drives `ordo serve` with the mcp-go client: the tools are
// offered and a caller-supplied plan executes to completion.
func TestServeStdio(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	vars := append(e.vars, "ORDO_SHEETS_ROOT="+repoRoot, "ORDO_EXPOSE_TOOLS=true")
	// The server's log goes to a file the test shows when it fails.
	logPath := filepath.Join(t.TempDir(), "serve.log")
	logs, _ := os.Create(logPath)
	defer logs.Close()
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("ordo serve log:\n%s", b)
		}
	})
	// Start it the way the example client configuration says.
	var conf struct {
		MCPServers map[string]struct{ Args []string } `json:"mcpServers"`
	}
	data, _ := os.ReadFile(filepath.Join(repoRoot, "examples", "mcp", "stdio.json"))
	if err := json.Unmarshal(data, &conf); err != nil || len(conf.MCPServers["ordo"].Args) == 0 {
		t.Fatalf("examples/mcp/stdio.json: %v", err)
	}
	c, err := client.NewStdioMCPClientWithOptions(filepath.Join(binDir, "ordo"), vars, conf.MCPServers["ordo"].Args,
		transport.WithCommandFunc(func(ctx context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env
			cmd.Dir = repoRoot
			cmd.Stderr = logs
			return cmd, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, initRequest()); err != nil {
		t.Fatal(err)
	}
	names := testmcp.ToolNames(t, c)
	for _, want := range []string{"plan", "execute", "approve", "call_tool", "sheets__query"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	plan, _ := os.ReadFile(filepath.Join(repoRoot, firstRun))
	var p map[string]any
	json.Unmarshal(plan, &p)
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "execute", Arguments: map[string]any{
		"plan": p, "options": map[string]any{"auto_approve": true},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	// auto_approve answered the plan approval; the chat post, which policy
	// confirms, waits for the person (here through approve).
	var view struct {
		RunID     string `json:"run_id"`
		Status    string
		Interrupt struct{ Kind, Tool string }
	}
	body, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(body, &view); res.IsError || view.Status != "interrupted" || view.Interrupt.Tool != "chat.post_message" {
		t.Fatalf("execute: error=%v %s", res.IsError, body)
	}
	res, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "approve", Arguments: map[string]any{
		"run_id": view.RunID, "decision": "approve",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(body), `"completed"`) {
		t.Fatalf("approve: error=%v %s", res.IsError, body)
	}
	// expose_tools: a read tool called directly goes through; the chat
	// post, which policy confirms, is not sent without an approval.
	res, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{
		"tool": "sheets.query", "arguments": map[string]any{"file": "examples/data/sales.csv", "where": "region = South"},
	}}})
	body, _ = json.Marshal(res)
	if err != nil || res.IsError || !strings.Contains(string(body), "Gadget") {
		t.Errorf("call_tool sheets.query: %v %s", err, body)
	}
	res, err = c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "chat__post_message", Arguments: map[string]any{
		"channel": "general", "text": "direct",
	}}})
	body, _ = json.Marshal(res)
	if err != nil || !res.IsError {
		t.Errorf("chat post without approval: %v %s", err, body)
	}
	outbox, _ := os.ReadFile(filepath.Join(e.data, "plugins", "chat", "channels", "general.jsonl"))
	if strings.Contains(string(outbox), `"direct"`) {
		t.Error("the unapproved post reached the outbox")
	}
}

// TestServeHTTPAuth starts `ordo serve --http` with a token from an
// environment variable: /healthz is open, /mcp needs the token.
func TestServeHTTPAuth(t *testing.T) {
	t.Parallel()
	const token = "ada-token-0123456789abcdef"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, url := serveHTTP(t, ctx, token, "")
	base := strings.TrimSuffix(url, "/mcp")
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %v %v", resp, err)
	}
	resp.Body.Close()
	c, err := httpSession(ctx, base+"/mcp", token)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve did not stop cleanly on SIGTERM: %v", err)
	}
}

func initRequest() mcp.InitializeRequest {
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-11-25"
	req.Params.ClientInfo = mcp.Implementation{Name: "ordo-cli-test", Version: "1"}
	return req
}
