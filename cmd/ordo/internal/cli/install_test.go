package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/ordo-run/ordo/host"
)

// TestInstallOverManifest: `plugins add --force` over a plugin installed
// with a FILE.json manifest (which the host reads before FILE.sha256)
// brings the manifest's checksum up to the new binary, keeping its env and
// args; left stale, it would have the running serve refuse the new binary.
func TestInstallOverManifest(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "hello")
	write := func(path, body string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(dst, "#!/bin/sh\necho old\n", 0o755)
	write(dst+".json", `{"sha256":"`+digest("#!/bin/sh\necho old\n")+`","env":{"K":"V"},"args":["-v"]}`, 0o644)
	src := filepath.Join(t.TempDir(), "ordo-plugin-hello")
	write(src, "#!/bin/sh\necho new\n", 0o755)

	sum, err := install(src, dst, digest("#!/bin/sh\necho new\n"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dst + ".json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := host.ParseManifest(raw)
	if err != nil || m.SHA256 != sum || m.Env["K"] != "V" || len(m.Args) != 1 || m.Args[0] != "-v" {
		t.Fatalf("manifest %s: %+v, %v (binary %s)", raw, m, err, sum)
	}
	if got, _ := host.PluginSHA256(dst); got != sum {
		t.Fatalf("installed binary %s, want %s", got, sum)
	}

	// A manifest that does not parse is not overwritten, nor the binary.
	write(dst+".json", `{"sha256": "x", "typo": 1}`, 0o644)
	if _, err := install(src, dst, sum); err == nil {
		t.Fatal("install over a broken manifest succeeded")
	}
	if b, _ := os.ReadFile(dst + ".json"); string(b) != `{"sha256": "x", "typo": 1}` {
		t.Fatalf("broken manifest rewritten: %s", b)
	}
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
