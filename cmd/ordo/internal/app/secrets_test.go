package app

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/internal/syncbuf"
)

// Open warns of what it cannot keep secret: a run store another user owns
// that others may read (root: the file is given to nobody), and an
// upstream whose URL secret variable is unset (refused, not fatal).
func TestOpenWarnsOfExposedSecrets(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give the store file away")
	}
	cfg := load(t, "upstreams:\n  - {name: keyed, url: \"http://127.0.0.1:1/s/{secret}/mcp\", url_secret_env: KEYED_SECRET}\n")
	cfg.Bundled.Enabled = false
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.DatabasePath(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(cfg.DatabasePath(), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	a, err := Open(context.Background(), cfg, slog.New(slog.NewTextHandler(&logs, nil)), Options{Env: envOf()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, want := range []string{"the run store is readable by other users", "owned by another user",
		"upstream URL secret variable is unset", "variable=KEYED_SECRET"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}
