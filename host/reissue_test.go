package host

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Issue 13 item 2: a bundled plugin SIGKILLs itself inside a side effect
// while the host lives. Its tools are idempotent_with_key, so the host
// re-issues the keyed call, with the same key, to the restarted plugin:
// the call succeeds and the effect happened once. Without a key nothing
// makes the repeat safe, and the crash (6002) stands.
func TestCrashedKeyedCallIsReissued(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills plugin binaries")
	}
	root := t.TempDir()
	cases := []struct {
		plugin, tool string
		env          map[string]string
		payload      string
		// effects counts the effect through the plugin (or its files root).
		effects func(t *testing.T, h *Host) int
	}{
		{
			plugin: "files", tool: "files.write", env: map[string]string{"ORDO_FILES_ROOT": root},
			payload: `{"path":"log.txt","content":"one\n","mode":"append"}`,
			effects: func(t *testing.T, _ *Host) int {
				data, _ := os.ReadFile(filepath.Join(root, "log.txt"))
				n := 0
				for _, b := range data {
					if b == '\n' {
						n++
					}
				}
				return n
			},
		},
		{
			plugin: "notes", tool: "notes.create_page",
			payload: `{"title":"Report","content":"first"}`,
			effects: func(t *testing.T, h *Host) int {
				out, err := h.Call(context.Background(), "notes.query_pages", json.RawMessage(`{}`), "")
				if err != nil {
					t.Fatal(err)
				}
				var q struct{ Count int }
				if err := json.Unmarshal(out, &q); err != nil {
					t.Fatal(err)
				}
				return q.Count
			},
		},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			if os.RemoveAll(filepath.Join(root, "log.txt")) != nil {
				t.Fatal("cannot clear the files root")
			}
			bin := filepath.Join(t.TempDir(), c.plugin)
			if out, err := exec.Command("go", "build", "-o", bin, "github.com/ordo-run/ordo/cmd/ordo-plugin-"+c.plugin).CombinedOutput(); err != nil {
				t.Fatalf("build: %v\n%s", err, out)
			}
			// plugins/internal/killpoint: die at the effect, in one process only.
			marker := filepath.Join(t.TempDir(), "killed")
			env := map[string]string{"ORDO_KILLPOINT": c.tool + "/effect", "ORDO_KILLPOINT_ONCE": marker}
			for k, v := range c.env {
				env[k] = v
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			h := newHost(t)
			if err := h.AddPlugin(ctx, PluginSpec{Name: c.plugin, Path: bin, Env: env}); err != nil {
				t.Fatal(err)
			}

			first, err := h.Call(ctx, c.tool, json.RawMessage(c.payload), "run-1/a1")
			if err != nil {
				t.Fatalf("keyed call cut off by the plugin's death: %v", err)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("the plugin was not killed at %s/effect: %v", c.tool, err)
			}
			if info := h.Sources()[0]; info.Restarts != 1 {
				t.Fatalf("plugin %+v: want one restart", info)
			}
			again, err := h.Call(ctx, c.tool, json.RawMessage(c.payload), "run-1/a1")
			if err != nil || string(again) != string(first) {
				t.Fatalf("repeat = %s, %v; want the first result %s", again, err, first)
			}
			if n := c.effects(t, h); n != 1 {
				t.Fatalf("%d effects, want 1", n)
			}

			// Unkeyed: the next kill (a fresh marker) is a crash, not retried.
			env["ORDO_KILLPOINT_ONCE"] = filepath.Join(t.TempDir(), "killed")
			h = newHost(t)
			if err := h.AddPlugin(ctx, PluginSpec{Name: c.plugin, Path: bin, Env: env}); err != nil {
				t.Fatal(err)
			}
			_, err = h.Call(ctx, c.tool, json.RawMessage(c.payload), "")
			if ce := contracts.AsError(err); err == nil || ce.Code != contracts.CodeToolCrashed || ce.Retryable {
				t.Fatalf("unkeyed call killed mid-effect: %v (%+v); want a non-retryable 6002", err, ce)
			}
		})
	}
}
