package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testbuild"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/plugins/text"
)

// bundledIn builds pkgs into ./bin of a new working directory, where
// FindBundled looks for the bundled plugins (as out, when given, else
// under their own names).
func bundledIn(t *testing.T, out string, pkgs ...string) {
	t.Helper()
	dir := t.TempDir()
	if err := testbuild.Build(filepath.Join(dir, "bin")+string(filepath.Separator)+out, pkgs...); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
}

// openGated opens cfg with the bundled plugins' processes held back until
// the returned gate is closed.
func openGated(t *testing.T, cfg string) (*App, chan struct{}) {
	t.Helper()
	gate := make(chan struct{})
	a, err := Open(context.Background(), load(t, cfg), slog.New(slog.DiscardHandler), Options{Env: envOf(), PluginStartGate: gate})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, gate
}

// TestBundledListedBeforeTheyStart: on a new data directory the bundled
// plugins' tools are listed as soon as Open returns, from the contracts
// ordo knows them to describe, while no plugin process has run; a call
// waits for the real process; and when the five real binaries describe
// themselves nothing in the catalog changes (with and without the chat
// webhook, which changes chat.post_message's contract).
func TestBundledListedBeforeTheyStart(t *testing.T) {
	pkgs := make([]string, 0, len(BundledNames))
	for _, name := range BundledNames {
		pkgs = append(pkgs, "./cmd/ordo-plugin-"+name)
	}
	bundledIn(t, "", pkgs...)
	for _, cfg := range []string{"", "bundled: {chat: {webhook_url: 'http://127.0.0.1:9/hook'}}\n"} {
		a, gate := openGated(t, cfg)
		sources := a.Host.Sources()
		if len(sources) != len(BundledNames) {
			t.Fatalf("sources %+v", sources)
		}
		for _, s := range sources {
			if s.State != host.StateStarting || s.PID != 0 || len(s.Tools) == 0 {
				t.Fatalf("%q: %+v, want its tools listed before its process runs", cfg, s)
			}
		}
		listed := a.Host.Version()
		out, err := a.Host.Call(context.Background(), "text.join", json.RawMessage(`{"items":["a","b"],"separator":"-"}`), "")
		if err != nil || string(out) != `{"count":2,"text":"a-b"}` {
			t.Fatalf("call before the gate opened: %s %v", out, err)
		}
		if s := source(a, "text"); s.State != host.StateRunning || s.PID == 0 {
			t.Fatalf("text after a call: %+v", s)
		}
		close(gate)
		testwait.Until(t, 2*time.Minute, "the bundled plugins running", func() bool {
			return !slices.ContainsFunc(a.Host.Sources(), func(s host.SourceInfo) bool { return s.State != host.StateRunning })
		})
		if v := a.Host.Version(); v != listed {
			t.Fatalf("%q: the catalog changed %d times when the plugins described themselves: ordo's contracts for them differ", cfg, v-listed)
		}
		a.Close()
	}
}

func source(a *App, name string) host.SourceInfo {
	for _, s := range a.Host.Sources() {
		if s.Name == name {
			return s
		}
	}
	return host.SourceInfo{}
}

// TestForeignBundledBinaryCorrectsTheList: a bundled plugin binary from
// another build, whose contracts are not those ordo knows, is listed as
// ordo knows it until it has started; then its own description is listed
// and an MCP client is told the list changed.
func TestForeignBundledBinaryCorrectsTheList(t *testing.T) {
	bundledIn(t, "ordo-plugin-text", "./cmd/ordo/internal/app/testdata/othertext")
	a, gate := openGated(t, "expose_tools: true\nbundled: {files: {enabled: false}, sheets: {enabled: false}, notes: {enabled: false}, chat: {enabled: false}}\n")
	srv, err := a.MCPServer("test", envOf())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c := stdioClient(t, func(ctx context.Context, in io.Reader, out io.Writer) error { return srv.ServeStdio(ctx, in, out) })
	changed := make(chan struct{}, 16)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/tools/list_changed" {
			changed <- struct{}{}
		}
	})
	known := slices.IndexFunc(text.Contracts(), func(c contracts.Contract) bool { return c.Tool == "text.template" })
	if got := templateDescription(t, c); !strings.HasPrefix(got, text.Contracts()[known].Description) {
		t.Fatalf("first list: text__template described %q, want ordo's own contract", got)
	}
	close(gate)
	select {
	case <-changed:
	case <-time.After(2 * time.Minute):
		t.Fatal("no tools/list_changed after the plugin described itself")
	}
	if got := templateDescription(t, c); !strings.HasPrefix(got, "Fill a template (another build).") {
		t.Fatalf("after the start: text__template described %q, want the binary's own contract", got)
	}
}

func templateDescription(t *testing.T, c *client.Client) string {
	t.Helper()
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name == "text__template" {
			return tl.Description
		}
	}
	t.Fatalf("text__template not listed")
	return ""
}
