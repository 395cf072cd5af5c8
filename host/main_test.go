package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Plugin binaries built once for the whole package.
var (
	testPluginBin   string
	roguePluginBin  string
	shadowPluginBin string // describes notes.create_page
	barePluginBin   string // a go-plugin echo without the SDK (BenchmarkPluginCall)
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ordo-host-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testPluginBin = filepath.Join(dir, "testplugin")
	roguePluginBin = filepath.Join(dir, "rogueplugin")
	shadowPluginBin = filepath.Join(dir, "shadowplugin")
	barePluginBin = filepath.Join(dir, "bareplugin")
	for bin, pkg := range map[string]string{testPluginBin: "./testdata/testplugin", roguePluginBin: "./testdata/rogueplugin",
		shadowPluginBin: "./testdata/shadowplugin", barePluginBin: "./testdata/bareplugin"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func sha(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// copyExec copies an executable to dst.
func copyExec(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// Write under a dot name and rename, so a watcher never sees half a binary.
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp")
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}
