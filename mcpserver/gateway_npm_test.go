package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testwait"
	textplugin "github.com/ordo-run/ordo/plugins/text"
)

// The npm servers host/mcpsource's tests use, installed by its script into
// the same cache directory (once per machine).
var (
	npmOnce sync.Once
	npmDir  string
	npmErr  string
)

// npmServer returns the executable of an installed upstream MCP server
// (mcp-server-filesystem, mcp-server-memory), installing them when
// missing. It skips only when npm or node is absent.
func npmServer(t *testing.T, name string) string {
	t.Helper()
	npmOnce.Do(func() {
		dir := os.Getenv("ORDO_UPSTREAMS_DIR")
		if cache, err := os.UserCacheDir(); dir == "" && err == nil {
			dir = filepath.Join(cache, "ordo", "upstreams-2026.8.31")
		}
		if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "mcp-server-memory")); err == nil {
			npmDir = dir
			return
		}
		if _, err := exec.LookPath("npm"); err != nil {
			npmErr = "npm is not installed: run host/mcpsource/testdata/install-upstreams.sh"
			return
		}
		out, err := exec.Command("sh", "../host/mcpsource/testdata/install-upstreams.sh").Output()
		npmDir = strings.TrimSpace(string(out))
		if err != nil {
			npmErr = "installing upstream MCP servers failed: " + err.Error()
		}
	})
	if npmErr != "" {
		if strings.HasPrefix(npmErr, "npm is not installed") {
			t.Skip(npmErr)
		}
		t.Fatal(npmErr)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	bin := filepath.Join(npmDir, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Real upstreams from npm behind the MCP server: a caller-supplied plan
// reads a file with server-filesystem and stores an entity with
// server-memory through execute; the gateway sends a destructive upstream
// tool to approval and lets a read tool through, recorded; adding and
// removing an upstream at run time changes the client's tool list.
func TestGatewayNPMUpstreams(t *testing.T) {
	fsBin, memBin := npmServer(t, "mcp-server-filesystem"), npmServer(t, "mcp-server-memory")
	dir := t.TempDir()
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	doc := `{"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program"]}]}`
	if err := os.WriteFile(filepath.Join(dir, "people.json"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newGatewayEnv(t, agent.Config{},
		host.WithDataDir(t.TempDir()), host.WithStartTimeout(30*time.Second),
		host.WithUpstreams(
			host.UpstreamSpec{Name: "fs", Command: []string{fsBin, dir}},
			host.UpstreamSpec{Name: "mem", Command: []string{memBin}, Env: map[string]string{"MEMORY_FILE_PATH": memFile}},
		))
	textTools, err := textplugin.Tools(textplugin.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tp, err := host.InProcess(textTools...)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.host.AddProvider(context.Background(), "textplugin", "v1", tp); err != nil {
		t.Fatal(err)
	}
	// Config upstreams connect in the background.
	testwait.Until(t, 30*time.Second, "upstream tools", func() bool {
		_, fsOK := e.host.Lookup("fs.read_text_file")
		_, memOK := e.host.Lookup("mem.create_entities")
		return fsOK && memOK
	})
	var lc listChanged
	c := e.stdioClient(t, clientOpts{onNotif: lc.on})

	plan := map[string]any{
		"version": "1.0", "goal": "remember the people in people.json", "timezone": "UTC",
		"actions": []any{
			map[string]any{"id": "read", "tool": "fs.read_text_file", "intent": "read", "requires": []any{}, "produces": []any{"content"},
				"inputs": map[string]any{"path": filepath.Join(dir, "people.json")}},
			map[string]any{"id": "parse", "tool": "text.extract_json_field", "intent": "transform", "requires": []any{"content"}, "produces": []any{"value"},
				"inputs": map[string]any{"path": "$.entities"}, "input_bindings": map[string]any{"json": "content"}},
			map[string]any{"id": "store", "tool": "mem.create_entities", "intent": "write", "requires": []any{"value"}, "produces": []any{"entities"},
				"input_bindings": map[string]any{"entities": "value"}},
		},
	}
	out := call(t, c, "execute", map[string]any{"plan": plan})
	if out["status"] != "completed" {
		t.Fatalf("execute: %v", out)
	}
	if disk, _ := os.ReadFile(memFile); !strings.Contains(string(disk), "wrote the first program") {
		t.Fatalf("memory file after the plan: %q", disk)
	}

	// A read tool of an upstream goes through the gateway and is recorded.
	nodes := call(t, c, "mem__open_nodes", map[string]any{"names": []any{"Ada"}})
	if b, _ := json.Marshal(nodes); !strings.Contains(string(b), "wrote the first program") {
		t.Fatalf("open_nodes: %s", b)
	}
	if rec := latestGatewayRun(t, c, "mem.open_nodes"); rec["status"] != "completed" {
		t.Fatalf("open_nodes record: %v", rec)
	}
	// A destructive one is sent to approval and nothing is deleted.
	code, sc := toolError(t, c, "mem__delete_entities", map[string]any{"entityNames": []any{"Ada"}})
	if code != contracts.CodeApprovalRequired {
		t.Fatalf("delete_entities: %d %v", code, sc)
	}
	if disk, _ := os.ReadFile(memFile); !strings.Contains(string(disk), "Ada") {
		t.Fatalf("deleted before approval: %q", disk)
	}
	if rej := call(t, c, "approve", map[string]any{"run_id": sc["details"].(map[string]any)["run_id"], "decision": "reject"}); rej["status"] != "rejected" {
		t.Fatalf("reject: %v", rej)
	}

	// Runtime add and remove of an upstream reach the connected client.
	before := lc.count()
	err = e.host.AddUpstream(context.Background(), host.UpstreamSpec{Name: "mem2", Command: []string{memBin},
		Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "m2.jsonl")}})
	if err != nil {
		t.Fatal(err)
	}
	// The count may already include a late notification of the initial
	// mount, so wait for both: a notification and mem2's tools listed.
	testwait.Until(t, 30*time.Second, "list_changed and mem2's tools after adding mem2", func() bool {
		_, listed := listTools(t, c)["mem2__read_graph"]
		return lc.count() > before && listed
	})
	if g := call(t, c, "call_tool", map[string]any{"tool": "mem2.read_graph"}); g["entities"] == nil {
		t.Fatalf("mem2.read_graph: %v", g)
	}
	before = lc.count()
	if err := e.host.RemoveUpstream(context.Background(), "mem2"); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "list_changed and mem2's tools gone after removing mem2", func() bool {
		for name := range listTools(t, c) {
			if strings.HasPrefix(name, "mem2__") {
				return false
			}
		}
		return lc.count() > before
	})
}
