package host

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testerr"
)

// TestSDKExample builds the plugin program shown in docs/plugins.md in a
// fresh module outside the repository and calls it through the host.
// The module requires what ordo requires, as `go mod tidy` would record
// it, so the build needs no module beyond those ordo's own build fetched;
// it runs with the caller's GOPROXY and fetches what is missing, like `go
// test` itself (an empty module cache is the first run on a new machine).
func TestSDKExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```go\n")
	src, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/plugins.md has no go block")
	}
	mod := t.TempDir()
	ordoMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	const ordoModule = "module github.com/ordo-run/ordo\n"
	if !strings.HasPrefix(string(ordoMod), ordoModule) {
		t.Fatalf("go.mod does not start with %q", ordoModule)
	}
	gomod := "module example.com/shout\n" + strings.TrimPrefix(string(ordoMod), ordoModule) +
		"\nrequire github.com/ordo-run/ordo v0.0.0\n\nreplace github.com/ordo-run/ordo => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "main.go": src} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(mod, "ordo-plugin-shout")
	cmd := exec.Command("go", "build", "-mod=mod", "-o", bin, ".")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the docs example: %v\n%s\n%s", err, out, src)
	}
	if n := strings.Count(strings.TrimSpace(src), "\n") + 1; n > 40 {
		t.Errorf("the example is %d lines; keep it about 30", n)
	}

	h := newHost(t)
	ctx := context.Background()
	if err := h.AddPlugin(ctx, PluginSpec{Name: "shout", Path: bin, SHA256: sha(t, bin)}); err != nil {
		t.Fatal(err)
	}
	out, err := h.Call(ctx, "shout.upper", json.RawMessage(`{"text":"hello"}`), "")
	if err != nil || string(out) != `{"text":"HELLO"}` {
		t.Fatalf("%s %v", out, err)
	}
	_, err = h.Call(ctx, "shout.upper", json.RawMessage(`{"text":""}`), "")
	if ce := testerr.Code(t, err, contracts.CodeToolFailed); ce.Retryable {
		t.Fatal("the example's error is not retryable")
	}
}
