package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testbuild"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/plugins/sdk"
	"github.com/ordo-run/ordo/recommender"
)

// Issue 10: a plugin dropped into the watched plugins directory while Ordo
// runs becomes the recommender's top result for a matching request, through
// the real host (a real plugin binary, checksum manifest, directory watch)
// and the index following the host's catalog events as Open wires it; only
// the added tool is embedded.
func TestHotAddedPluginTopsRecommendations(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "plugin-hello")
	if err := testbuild.Build(bin, "./examples/plugin-hello"); err != nil {
		t.Fatal(err)
	}
	cfg := load(t, "")
	cfg.Bundled.Enabled = false
	a, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler), Options{Env: envOf()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// A catalog to compete with, among them a near miss ("by name").
	var tools []sdk.Tool
	for _, c := range [][2]string{
		{"people.find", "Find a person by name in the directory."},
		{"mail.send", "Send an email message to a recipient."},
		{"calendar.create_event", "Create a calendar event at a time."},
		{"files.read", "Read a file's text."},
		{"chat.post", "Post a message to a chat channel."},
	} {
		tools = append(tools, sdk.Tool{Contract: contracts.Contract{
			Tool: c[0], Service: strings.SplitN(c[0], ".", 2)[0], RiskLevel: contracts.RiskRead, Description: c[1],
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object"}`),
		}, Handler: func(context.Context, sdk.Call) (any, error) { return map[string]any{}, nil }})
	}
	prov, err := host.InProcess(tools...)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Host.AddProvider(context.Background(), "base", "test", prov); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, time.Minute, "the base tools indexed", func() bool { return a.Recommender.Stats().Tools == len(tools) })
	before := a.Recommender.Stats()
	const query = "greet Ada by name"
	hits, err := a.Recommender.Search(context.Background(), query, recommender.SearchOptions{K: 3})
	if err != nil || len(hits) == 0 || hits[0].Tool == "hello.greet" {
		t.Fatalf("before the plugin: %+v, %v", hits, err)
	}

	// Install as `ordo plugins add` does: manifest first, then the binary
	// renamed into place, so the watcher never sees half a file.
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if err := os.MkdirAll(cfg.PluginsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg.PluginsDir, "hello.sha256"), []byte(hex.EncodeToString(sum[:])+"  hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(cfg.PluginsDir, ".hello.tmp")
	if err := os.WriteFile(tmp, data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(cfg.PluginsDir, "hello")); err != nil {
		t.Fatal(err)
	}

	testwait.Until(t, time.Minute, "hello.greet indexed", func() bool { return a.Recommender.Stats().Tools == len(tools)+1 })
	if _, ok := a.Host.Lookup("hello.greet"); !ok {
		t.Fatal("the recommender indexed a tool the host does not list")
	}
	hits, err = a.Recommender.Search(context.Background(), query, recommender.SearchOptions{K: 3})
	if err != nil || len(hits) == 0 || hits[0].Tool != "hello.greet" {
		t.Fatalf("after the plugin: %+v, %v", hits, err)
	}
	if after := a.Recommender.Stats(); after.Embedded-before.Embedded != 1 {
		t.Fatalf("embedded %d documents for one added tool (before %+v, after %+v)", after.Embedded-before.Embedded, before, after)
	}
	// The planner's candidate list sees it too.
	names, err := a.Recommender.Recommend(context.Background(), query, 1)
	if err != nil || fmt.Sprint(names) != "[hello.greet]" {
		t.Fatalf("Recommend: %v, %v", names, err)
	}
}
