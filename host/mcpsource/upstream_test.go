package mcpsource_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/host/mcpsource"
	"github.com/ordo-run/ordo/internal/syncbuf"
	"github.com/ordo-run/ordo/internal/testwait"
)

func newHost(t testing.TB, opts ...host.Option) *host.Host {
	t.Helper()
	base := []host.Option{
		host.WithLogger(testLogger()),
		host.WithDataDir(t.TempDir()),
		host.WithRestartBackoff(50*time.Millisecond, 500*time.Millisecond),
		host.WithStartTimeout(30 * time.Second),
		host.WithUpstreamOpener(mcpsource.Open),
	}
	h, err := host.New(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func call(t *testing.T, h *host.Host, tool string, payload any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(payload)
	out, err := h.Call(context.Background(), tool, b, "k-"+tool)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s result %s: %v", tool, out, err)
	}
	return v
}

func upstream(t *testing.T, h *host.Host, name string) host.UpstreamInfo {
	t.Helper()
	for _, u := range h.Upstreams() {
		if u.Name == name {
			return u
		}
	}
	t.Fatalf("no upstream %q", name)
	return host.UpstreamInfo{}
}

func risk(t *testing.T, h *host.Host, tool string) contracts.Risk {
	t.Helper()
	tl, ok := h.Lookup(tool)
	if !ok {
		t.Fatalf("no tool %q in the catalog", tool)
	}
	return tl.Contract.RiskLevel
}

// A file read with server-filesystem becomes an entity stored with
// server-memory, both through host.Call and the produces_map.
func TestFilesystemAndMemory(t *testing.T) {
	fsBin, memBin := upstreamBin(t, "mcp-server-filesystem"), upstreamBin(t, "mcp-server-memory")
	dir := t.TempDir()
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("Ordo reads upstream files"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHost(t)
	ctx := context.Background()
	if err := h.AddUpstream(ctx, host.UpstreamSpec{Name: "fs", Command: []string{fsBin, dir}}); err != nil {
		t.Fatal(err)
	}
	if err := h.AddUpstream(ctx, host.UpstreamSpec{Name: "mem", Command: []string{memBin},
		Env: map[string]string{"MEMORY_FILE_PATH": memFile}}); err != nil {
		t.Fatal(err)
	}

	read, _ := h.Lookup("fs.read_text_file")
	res := call(t, h, "fs.read_text_file", map[string]any{"path": filepath.Join(dir, "note.txt")})
	state, err := read.Produce(res)
	if err != nil {
		t.Fatal(err)
	}
	if state["content"] != "Ordo reads upstream files" {
		t.Fatalf("produced %v", state)
	}

	call(t, h, "mem.create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "note", "entityType": "file", "observations": []any{state["content"]}}}})
	graph := call(t, h, "mem.open_nodes", map[string]any{"names": []any{"note"}})
	b, _ := json.Marshal(graph)
	if !strings.Contains(string(b), "Ordo reads upstream files") {
		t.Fatalf("open_nodes: %s", b)
	}
	if disk, _ := os.ReadFile(memFile); !strings.Contains(string(disk), "Ordo reads upstream files") {
		t.Fatalf("memory file: %q", disk)
	}

	for tool, want := range map[string]contracts.Risk{
		"fs.read_text_file": contracts.RiskRead, "fs.write_file": contracts.RiskDestructive,
		"fs.create_directory": contracts.RiskWrite, "mem.delete_entities": contracts.RiskDestructive,
		"mem.create_entities": contracts.RiskWrite, "mem.read_graph": contracts.RiskRead,
	} {
		if got := risk(t, h, tool); got != want {
			t.Errorf("%s: risk %s, want %s", tool, got, want)
		}
	}

	// An isError answer is a tool failure with the upstream's words.
	_, err = h.Call(ctx, "fs.read_text_file", json.RawMessage(`{"path":"/etc/hostname"}`), "k")
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeToolFailed || ce.Retryable || !strings.Contains(ce.Message, "denied") {
		t.Fatalf("outside the allowed dir: %v", err)
	}
	// A payload the contract refuses never reaches the upstream.
	_, err = h.Call(ctx, "fs.read_text_file", json.RawMessage(`{"path":7}`), "k")
	if contracts.CodeOf(err) != contracts.CodeSchemaViolation {
		t.Fatalf("bad payload: %v", err)
	}
}

// server-everything's tools carry the risk their annotations say, an
// override wins, and results without an output schema come back as text.
func TestEverythingRisks(t *testing.T) {
	bin := upstreamBin(t, "mcp-server-everything")
	h := newHost(t)
	err := h.AddUpstream(context.Background(), host.UpstreamSpec{Name: "every", Command: []string{bin, "stdio"},
		Overrides: map[string]host.ToolOverride{"get-env": {Risk: contracts.RiskWrite, Tags: []string{contracts.TagPII}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]contracts.Risk{
		"every.echo": contracts.RiskRead, "every.get-sum": contracts.RiskRead,
		"every.get-structured-content":    contracts.RiskRead,
		"every.gzip-file-as-resource":     contracts.RiskWrite,
		"every.toggle-simulated-logging":  contracts.RiskWrite,
		"every.toggle-subscriber-updates": contracts.RiskWrite,
		"every.get-env":                   contracts.RiskWrite, // overridden from read
	}
	for tool, r := range want {
		if got := risk(t, h, tool); got != r {
			t.Errorf("%s: risk %s, want %s", tool, got, r)
		}
	}
	if env, _ := h.Lookup("every.get-env"); !slices.Equal(env.Contract.Tags, []string{contracts.TagPII}) {
		t.Errorf("get-env tags %v", env.Contract.Tags)
	}

	echo, _ := h.Lookup("every.echo")
	res := call(t, h, "every.echo", map[string]any{"message": "hi"})
	if st, err := echo.Produce(res); err != nil || st["text"] != "Echo: hi" {
		t.Fatalf("echo: %v %v", st, err)
	}
	sc := call(t, h, "every.get-structured-content", map[string]any{"location": "New York"})
	if _, ok := sc["temperature"]; !ok {
		t.Fatalf("structured content: %v", sc)
	}
	u := upstream(t, h, "every")
	if !u.Connected || u.Transport != "stdio" || u.PID == 0 || !strings.Contains(u.Server, "/") || len(u.Tools) != len(h.List()) {
		t.Fatalf("info %+v", u)
	}
}

// Adding and removing an upstream at run time shows in catalog events; a
// killed stdio upstream is restarted and callable again.
func TestRuntimeAddRemoveRestart(t *testing.T) {
	bin := upstreamBin(t, "mcp-server-memory")
	h := newHost(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := h.Subscribe(ctx)

	spec := host.UpstreamSpec{Name: "mem", Command: []string{bin},
		Env: map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "m.jsonl")}}
	if err := h.AddUpstream(ctx, spec); err != nil {
		t.Fatal(err)
	}
	added := collect(t, events, host.Added, 9)
	if !slices.Contains(added, "mem.create_entities") || !slices.Contains(added, "mem.read_graph") {
		t.Fatalf("added %v", added)
	}
	if err := h.AddUpstream(ctx, spec); contracts.CodeOf(err) != contracts.CodePluginRefused {
		t.Fatalf("duplicate name: %v", err)
	}

	first := upstream(t, h, "mem")
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 30*time.Second, "a restarted upstream", func() bool {
		u := upstream(t, h, "mem")
		return u.Connected && u.PID != first.PID && u.Restarts == 1 && u.State == host.StateRunning
	})
	call(t, h, "mem.read_graph", map[string]any{})

	second := upstream(t, h, "mem")
	if err := h.RemoveUpstream(ctx, "mem"); err != nil {
		t.Fatal(err)
	}
	if removed := collect(t, events, host.Removed, 9); !slices.Equal(removed, added) {
		t.Fatalf("removed %v, added %v", removed, added)
	}
	if _, ok := h.Lookup("mem.read_graph"); ok {
		t.Fatal("tool still listed after removal")
	}
	if err := syscall.Kill(second.PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("upstream process %d still exists after removal: %v", second.PID, err)
	}
	if err := h.RemoveUpstream(ctx, "mem"); contracts.CodeOf(err) != contracts.CodeInvalidInput {
		t.Fatalf("second removal: %v", err)
	}
}

// collect reads n events of kind and returns their tool names, sorted.
func collect(t *testing.T, events <-chan host.CatalogEvent, kind host.EventKind, n int) []string {
	t.Helper()
	var names []string
	timeout := time.After(30 * time.Second)
	for len(names) < n {
		select {
		case ev := <-events:
			if ev.Kind != kind {
				t.Fatalf("unexpected %s event for %s", ev.Kind, ev.Tool)
			}
			names = append(names, ev.Tool)
		case <-timeout:
			t.Fatalf("got %d of %d %s events: %v", len(names), n, kind, names)
		}
	}
	slices.Sort(names)
	return names
}

// testLogger discards logs unless ORDO_TEST_LOG=debug.
func testLogger() *slog.Logger {
	if os.Getenv("ORDO_TEST_LOG") == "debug" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// An upstream that fails saying what its configured env holds ("auth
// failed with key …") has the value hidden in its stderr as Ordo logs it
// and quotes it in the error that reports the exit: the env values are
// secrets (config show hides them too).
func TestUpstreamStderrHidesEnvValues(t *testing.T) {
	const secret = "env-key-s3cret"
	var logs syncbuf.Buffer
	h := newHost(t, host.WithStartTimeout(10*time.Second),
		host.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	err := h.AddUpstream(context.Background(), host.UpstreamSpec{Name: "crashy",
		Command: []string{"sh", "-c", `echo "auth failed with key $VAULT_KEY" >&2; exit 3`}, Env: map[string]string{"VAULT_KEY": secret}})
	if contracts.CodeOf(err) != contracts.CodePluginRefused || !strings.Contains(err.Error(), "auth failed with key "+contracts.Redacted) {
		t.Fatalf("add: %v", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
		t.Fatalf("the env value is shown: %v\n%s", err, logs.String())
	}
}

// An upstream that writes its key in two writes (half, a pause, the rest),
// or in a line longer than lineMax cut inside the key, has it hidden all
// the same: the tail hides whole lines, and cuts a long one where no value
// straddles the cut.
func TestUpstreamStderrHidesSplitValues(t *testing.T) {
	const secret = "env-key-s3cret" // 14 bytes: halves of 7
	for name, script := range map[string]string{
		"two writes": `printf 'auth failed with key %s' "${VAULT_KEY%???????}" >&2; sleep 0.3; printf '%s\n' "${VAULT_KEY#???????}" >&2; exit 3`,
		"long line": fmt.Sprintf(`head -c %d /dev/zero | tr '\0' x >&2; printf '%%s' "${VAULT_KEY%%???????}" >&2; sleep 0.3; printf '%%s\n' "${VAULT_KEY#???????}" >&2; exit 3`,
			mcpsource.LineMax-3),
	} {
		t.Run(name, func(t *testing.T) {
			var logs syncbuf.Buffer
			h := newHost(t, host.WithStartTimeout(10*time.Second),
				host.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			err := h.AddUpstream(context.Background(), host.UpstreamSpec{Name: "crashy",
				Command: []string{"sh", "-c", script}, Env: map[string]string{"VAULT_KEY": secret}})
			if contracts.CodeOf(err) != contracts.CodePluginRefused || !strings.Contains(logs.String(), contracts.Redacted) {
				t.Fatalf("add: %v\n%.2000s", err, logs.String())
			}
			for _, half := range []string{secret, secret[:7], secret[7:]} {
				if strings.Contains(err.Error(), half) || strings.Contains(logs.String(), half) {
					l := logs.String()
					i := max(strings.Index(l, half), 0)
					t.Fatalf("%q is shown: %v\n…%s…", half, err, l[max(i-200, 0):min(i+200, len(l))])
				}
			}
		})
	}
}
