package host

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host/internal/testtools"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/internal/testwait"
)

// A plugin named with a dot would own a sub-namespace of another plugin:
// "notes.evil" could describe notes.evil.get, a tool under notes.* that
// allowed_services [notes] and notes.* policy rules would count as the
// notes plugin's. Such a name is refused however the plugin comes (the
// API, the plugins directory), and nothing of it runs.
func TestPluginNameWithDotRefused(t *testing.T) {
	dir := t.TempDir()
	copyExec(t, roguePluginBin, filepath.Join(dir, "ordo-plugin-notes.evil"))
	manifest := `{"env":{"ROGUE_SERVICE":"notes.evil"}}`
	if err := os.WriteFile(filepath.Join(dir, "ordo-plugin-notes.evil.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, WithPluginsDir(dir))
	err := h.AddPlugin(t.Context(), PluginSpec{Name: "files.evil", Path: roguePluginBin, Env: map[string]string{"ROGUE_SERVICE": "files.evil"}})
	if ce := testerr.Code(t, err, contracts.CodeInvalidInput); ce.Details["field"] != "name" {
		t.Fatalf("details %v", ce.Details)
	}
	srcs := h.Sources()
	if len(srcs) != 1 || srcs[0].Name != "notes.evil" || srcs[0].State != StateRefused || !contains(srcs[0].Error, contracts.CodeInvalidInput) {
		t.Fatalf("sources %+v", srcs)
	}
	if tools := h.List(); len(tools) != 0 {
		t.Fatalf("catalog %v", tools)
	}
}

// A plugin answers with an error code of its own choosing, but only the
// codes of a tool failure are its to give (docs/plugins.md): one that
// claims the host's "unavailable" (6004, retryable) must not make the call
// wait for a restart that never comes, nor "crashed" be retried, nor any
// other code (approval required, budget) reach the engine as Ordo's. It is
// a plain tool failure naming the code the plugin sent.
func TestPluginCannotForgeHostCodes(t *testing.T) {
	h := newHost(t)
	for _, code := range []contracts.Code{contracts.CodeToolUnavailable, contracts.CodeToolCrashed, contracts.CodeApprovalRequired,
		contracts.CodeBudgetExceeded, contracts.CodeVerificationFailed, contracts.CodePluginRefused} {
		name := "forge" + strconv.Itoa(int(code))
		spec := PluginSpec{Name: name, Path: roguePluginBin, Env: map[string]string{"ROGUE_MODE": "forge", "ROGUE_SERVICE": name,
			"ROGUE_CODE": strconv.Itoa(int(code))}}
		if err := h.AddPlugin(t.Context(), spec); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		_, err := h.Call(ctx, name+".get", []byte(`{}`), "k")
		cancel()
		ce := testerr.Code(t, err, contracts.CodeToolFailed)
		if ce.Details["plugin_code"] != float64(code) && ce.Details["plugin_code"] != int(code) {
			t.Errorf("code %d: details %v", code, ce.Details)
		}
		if !strings.Contains(ce.Message, "forged") {
			t.Errorf("code %d: message %q", code, ce.Message)
		}
	}
	// The codes of a tool failure stand as sent.
	spec := PluginSpec{Name: "honest", Path: roguePluginBin, Env: map[string]string{"ROGUE_MODE": "forge", "ROGUE_SERVICE": "honest",
		"ROGUE_CODE": strconv.Itoa(int(contracts.CodeToolInvalidOutput))}}
	if err := h.AddPlugin(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	_, err := h.Call(t.Context(), "honest.get", []byte(`{}`), "")
	testerr.Code(t, err, contracts.CodeToolInvalidOutput)
}

// A plugin's children do not outlive it: not when it crashes (the
// restart replaces the whole process group), nor when it is removed.
func TestPluginChildrenStopWithIt(t *testing.T) {
	data := t.TempDir()
	h := newHost(t, WithDataDir(data), WithRestartBackoff(10*time.Millisecond, 50*time.Millisecond))
	if err := h.AddPlugin(t.Context(), PluginSpec{Name: "fork", Path: roguePluginBin,
		Env: map[string]string{"ROGUE_MODE": "fork", "ROGUE_SERVICE": "fork"}}); err != nil {
		t.Fatal(err)
	}
	children := func() []int {
		files, _ := filepath.Glob(filepath.Join(data, "plugins", "fork", "child-*"))
		var pids []int
		for _, f := range files {
			pid, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(f), "child-"))
			pids = append(pids, pid)
		}
		return pids
	}
	first := children()
	if len(first) != 1 {
		t.Fatalf("children %v", first)
	}
	_, err := h.Call(t.Context(), "fork.get", []byte(`{}`), "")
	testerr.Code(t, err, contracts.CodeToolCrashed)
	testwait.Until(t, 30*time.Second, "the crashed plugin's child killed", func() bool { return dead(first[0]) })
	testwait.Until(t, 30*time.Second, "the plugin restarted", func() bool { return len(children()) == 2 })
	if err := h.RemoveSource(t.Context(), "fork"); err != nil {
		t.Fatal(err)
	}
	for _, pid := range children() {
		testwait.Until(t, 30*time.Second, "the removed plugin's child killed", func() bool { return dead(pid) })
	}
}

// dead reports whether process pid is gone or a zombie (killed, not yet
// reaped by whoever inherited it).
func dead(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(after, "Z")
}

// TestPinnedBinaryChangedUnderneath: a plugin pinned to the bytes it
// started from is never started again on other bytes, however they change
// under its path — rewritten in place with its size and modification time
// kept, through a hard link, by swapping the symlink its path is, or by a
// rename over it — neither when its process is restarted (the plugin fails
// for good: 6006) nor at the next start of a host whose contract cache
// holds an entry for it (refused with 6006, no tool listed from the cache).
func TestPinnedBinaryChangedUnderneath(t *testing.T) {
	flip := func(t *testing.T, file string) { // same size, same modification time
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(file, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := []byte{0}
		if _, err := f.ReadAt(b, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{^b[0]}, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		if after, _ := os.Stat(file); after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
			t.Fatalf("size or mtime changed: %v %v", after.Size(), after.ModTime())
		}
	}
	for name, tc := range map[string]struct {
		setup  func(t *testing.T, dir string) string // returns the plugin's path
		change func(t *testing.T, dir string)
	}{
		"in place": {
			func(t *testing.T, dir string) string {
				copyExec(t, testPluginBin, filepath.Join(dir, "p"))
				return filepath.Join(dir, "p")
			},
			func(t *testing.T, dir string) { flip(t, filepath.Join(dir, "p")) },
		},
		"hard link": {
			func(t *testing.T, dir string) string {
				copyExec(t, testPluginBin, filepath.Join(dir, "a"))
				if err := os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "p")); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(dir, "p")
			},
			func(t *testing.T, dir string) { flip(t, filepath.Join(dir, "a")) },
		},
		"symlink swap": {
			func(t *testing.T, dir string) string {
				copyExec(t, testPluginBin, filepath.Join(dir, "a"))
				copyExec(t, roguePluginBin, filepath.Join(dir, "b"))
				if err := os.Symlink("a", filepath.Join(dir, "p")); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(dir, "p")
			},
			func(t *testing.T, dir string) {
				if err := os.Symlink("b", filepath.Join(dir, "q")); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(filepath.Join(dir, "q"), filepath.Join(dir, "p")); err != nil {
					t.Fatal(err)
				}
			},
		},
		"rename over": {
			func(t *testing.T, dir string) string {
				copyExec(t, testPluginBin, filepath.Join(dir, "p"))
				return filepath.Join(dir, "p")
			},
			func(t *testing.T, dir string) { copyExec(t, roguePluginBin, filepath.Join(dir, "p")) },
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, data := t.TempDir(), t.TempDir()
			path := tc.setup(t, dir)
			pinned := sha(t, path)
			// The restart waits long enough for the change to land first: a
			// running binary cannot be written (ETXTBSY), a dead one can.
			h := newHost(t, WithDataDir(data), WithRestartBackoff(3*time.Second, 3*time.Second))
			if err := h.AddPlugin(t.Context(), PluginSpec{Name: "test", Path: path}); err != nil {
				t.Fatal(err)
			}
			killAndReap(t, h.Sources()[0].PID)
			tc.change(t, dir)
			if sha(t, path) == pinned {
				t.Fatal("the change left the bytes as they were")
			}
			_, err := h.Call(t.Context(), "test.echo", []byte(`{"text":"x"}`), "")
			testerr.Code(t, err, contracts.CodeToolUnavailable)
			if p := h.Sources()[0]; p.State != StateFailed || !contains(p.Error, contracts.CodeChecksumMismatch) {
				t.Fatalf("plugin %+v, want failed with 6006", p)
			}
			h.Close()

			next := newHost(t, WithDataDir(data), WithPlugins(PluginSpec{Name: "test", Path: path, SHA256: pinned}))
			if p := next.Sources()[0]; p.State != StateRefused || !contains(p.Error, contracts.CodeChecksumMismatch) {
				t.Fatalf("next start: %+v, want refused with 6006", p)
			}
			if tools := next.List(); len(tools) != 0 {
				t.Fatalf("next start lists %d tools", len(tools))
			}
		})
	}
}

// A name kept for the host owner's own provider (WithReservedNames: Ordo's
// built-in llm tools, added after New) cannot be taken by a plugin, from
// the plugins directory or the API, nor by an upstream: the provider is
// then added under it.
func TestReservedNameRefused(t *testing.T) {
	dir := t.TempDir()
	copyExec(t, roguePluginBin, filepath.Join(dir, "ordo-plugin-llm"))
	if err := os.WriteFile(filepath.Join(dir, "ordo-plugin-llm.json"), []byte(`{"env":{"ROGUE_SERVICE":"llm"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, WithPluginsDir(dir), WithReservedNames("llm"))
	err := h.AddPlugin(t.Context(), PluginSpec{Name: "llm", Path: roguePluginBin, Env: map[string]string{"ROGUE_SERVICE": "llm"}})
	testerr.Code(t, err, contracts.CodePluginRefused)
	err = h.AddUpstream(t.Context(), UpstreamSpec{Name: "llm", URL: "http://127.0.0.1:1/mcp"})
	if testerr.Code(t, err, contracts.CodePluginRefused); !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("upstream: %v", err)
	}
	if srcs := h.Sources(); len(srcs) != 1 || srcs[0].State != StateRefused || !strings.Contains(srcs[0].Error, "reserved") {
		t.Fatalf("sources %+v", srcs)
	}
	p, err := InProcess(testtools.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddProvider(t.Context(), "llm", "builtin", p); err != nil {
		t.Fatal(err)
	}
}

// A plugin's answer is at most contracts.MaxMessageBytes (go-plugin would
// take 2 GiB): a larger result is a tool failure (6000, not a crash, so
// never re-issued) and the plugin keeps serving; a larger Describe refuses
// the plugin (6005).
func TestPluginHugeMessages(t *testing.T) {
	h := newHost(t)
	err := h.AddPlugin(t.Context(), PluginSpec{Name: "rogue", Path: roguePluginBin, Env: map[string]string{"ROGUE_MODE": "huge"}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := h.Call(t.Context(), "rogue.get", []byte(`{}`), "k")
		if ce := testerr.Code(t, err, contracts.CodeToolFailed); !strings.Contains(ce.Message, "larger than max") {
			t.Fatalf("huge result: %v", err)
		}
	}
	if p := h.Sources()[0]; p.State != StateRunning || p.Restarts != 0 {
		t.Fatalf("plugin %+v", p)
	}
	err = h.AddPlugin(t.Context(), PluginSpec{Name: "rogue2", Path: roguePluginBin,
		Env: map[string]string{"ROGUE_MODE": "hugedescribe", "ROGUE_SERVICE": "rogue2"}})
	testerr.Code(t, err, contracts.CodePluginRefused)
}

// A tool that repeats its plugin's configured credential (the value of an
// env variable named …KEY) in its result or its error has it hidden before
// any layer above the host (the run record, the re-planner's prompt, logs,
// traces) sees it; a value of another variable (ROGUE_MODE) is data, kept.
func TestToolAnswerHidesSourceSecrets(t *testing.T) {
	const secret = "plugin-env-s3cret-42"
	h := newHost(t)
	if err := h.AddPlugin(t.Context(), PluginSpec{Name: "leaky", Path: roguePluginBin,
		Env: map[string]string{"ROGUE_MODE": "leak", "ROGUE_SERVICE": "leaky", "ROGUE_KEY": secret}}); err != nil {
		t.Fatal(err)
	}
	out, err := h.Call(t.Context(), "leaky.get", []byte(`{}`), "")
	if err != nil || string(out) != `{"mode":"leak","said":"using key `+contracts.Redacted+`"}` {
		t.Fatalf("result %s, %v", out, err)
	}
	_, err = h.Call(t.Context(), "leaky.get", []byte(`{"fail":true}`), "")
	testerr.Code(t, err, contracts.CodeToolFailed)
	if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "bad key "+contracts.Redacted) {
		t.Fatalf("error: %v", err)
	}
}
