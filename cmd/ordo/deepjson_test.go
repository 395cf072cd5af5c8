package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// TestDeepJSONBoundsMemory is issue 13 item 4 as an attacker did it: 8
// concurrent requests of ~190 KB nesting ~10,000 levels, sent to `ordo serve
// --http` with a valid token, into a plan that executes at once. Each is
// refused with 1016, the server keeps serving, and its peak resident memory
// stays under 200 MB. (Before the bound, one such request took the server
// from 48 MB to 856 MB and eight went past 6 GB.) A watchdog kills the
// server past 1 GB, so a regression fails the test instead of the machine.
func TestDeepJSONBoundsMemory(t *testing.T) {
	const token, limit, watchdog = "ada-token-0123456789abcdef", 200 << 20, 1 << 30
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, mcpURL := serveHTTP(t, ctx, token, "")
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	if _, err := os.ReadFile(status); err != nil {
		t.Skipf("no %s: %v", status, err)
	}
	session := initSession(t, mcpURL, token)
	body := deepExecute(9_980)
	if len(body) < 180_000 {
		t.Fatalf("request of %d bytes", len(body))
	}
	done := make(chan struct{})
	killed := make(chan int64, 1)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if rss := memKB(status, "VmRSS") << 10; rss > watchdog {
				cmd.Process.Kill()
				killed <- rss
				return
			}
		}
	}()
	var wg sync.WaitGroup
	answers := make([]string, 8)
	for i := range answers {
		wg.Go(func() {
			resp, err := post(mcpURL, token, session, body)
			if err != nil {
				answers[i] = err.Error()
				return
			}
			var refusal struct {
				Error struct{ Data contracts.Error }
			}
			if json.Unmarshal(resp, &refusal) != nil || refusal.Error.Data.Code != contracts.CodeJSONTooDeep ||
				refusal.Error.Data.Details["limit"] != float64(contracts.MaxJSONDepth) {
				answers[i] = string(resp[:min(len(resp), 300)])
			}
		})
	}
	wg.Wait()
	close(done)
	select {
	case rss := <-killed:
		t.Fatalf("the server passed %d MB and was killed", rss>>20)
	default:
	}
	for i, a := range answers {
		if a != "" {
			t.Errorf("request %d: not the coded refusal: %s", i, a)
		}
	}
	if peak := memKB(status, "VmHWM") << 10; peak >= limit {
		t.Errorf("peak resident memory %d MB, want < %d MB", peak>>20, limit>>20)
	} else {
		t.Logf("peak resident memory %d MB", peak>>20)
	}
	if runs := callTool(t, ctx, mcpURL, token, "list_runs", map[string]any{}); runs == nil {
		t.Error("the server does not serve after the refusals")
	}
}

// serveHTTP starts `ordo serve --http` on the embedded store with one admin
// token (and httpKeys, more http lines such as "  read_timeout: 1s\n")
// and returns the process and its MCP URL.
func serveHTTP(t *testing.T, ctx context.Context, token, httpKeys string) (*exec.Cmd, string) {
	t.Helper()
	e := newEnv(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte("http:\n"+httpKeys+"  tokens:\n    - {name: ada, token_env: ADA_TOKEN, role: admin}\n"), 0o600)
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "--config", cfg, "serve", "--http", "127.0.0.1:0")
	cmd.Dir, cmd.Env = repoRoot, append(e.vars, "ADA_TOKEN="+token)
	url, _ := listening(t, cmd)
	return cmd, url
}

// deepExecute is an "execute" call of a one-step plan whose payload nests
// depth objects deep; with auto_approve it would run at once.
func deepExecute(depth int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"execute","arguments":{"plan":{"version":"1.0","goal":"g","timezone":"UTC","actions":[{"id":"a","tool":"text.template","intent":"transform","requires":[],"produces":["text"],"inputs":{"template":"x","data":`)
	for i := range depth {
		fmt.Fprintf(&b, `{"level_%08d":`, i)
	}
	b.WriteString("1" + strings.Repeat("}", depth))
	b.WriteString(`}}]},"options":{"auto_approve":true}}}}`)
	return b.Bytes()
}

// initSession opens an MCP session over raw HTTP (protocol 2025-11-25)
// and returns its id.
func initSession(t *testing.T, mcpURL, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"deep","version":"1"}}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize: %s, no session", resp.Status)
	}
	if _, err := post(mcpURL, token, session, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	return session
}

func post(mcpURL, token, session string, body []byte) ([]byte, error) {
	req, _ := http.NewRequest(http.MethodPost, mcpURL, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// memKB reads one kB field of /proc/PID/status (0 once the process is gone).
func memKB(status, field string) int64 {
	data, _ := os.ReadFile(status)
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
