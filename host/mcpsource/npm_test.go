package mcpsource_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The npm servers, installed once per machine by testdata/install-upstreams.sh.
var (
	npmOnce sync.Once
	npmDir  string
	npmErr  string
)

// upstreamBin returns the path of an installed server's executable
// (mcp-server-filesystem, mcp-server-memory, mcp-server-everything),
// installing them first when missing. It skips only when npm is absent.
func upstreamBin(t testing.TB, name string) string {
	t.Helper()
	npmOnce.Do(func() {
		dir := os.Getenv("ORDO_UPSTREAMS_DIR")
		if dir == "" {
			cache, err := os.UserCacheDir()
			if err != nil {
				cache = os.TempDir()
			}
			dir = filepath.Join(cache, "ordo", "upstreams-2026.8.31")
		}
		if installed(dir) {
			npmDir = dir
			return
		}
		if _, err := exec.LookPath("npm"); err != nil {
			npmErr = "npm is not installed: cannot install the upstream MCP servers (run testdata/install-upstreams.sh)"
			return
		}
		out, err := exec.Command("sh", "testdata/install-upstreams.sh", dir).CombinedOutput()
		if err != nil || !installed(dir) {
			npmErr = "installing upstream MCP servers failed: " + string(out)
			return
		}
		npmDir = strings.TrimSpace(dir)
	})
	if npmDir == "" {
		if strings.HasPrefix(npmErr, "npm is not installed") {
			t.Skip(npmErr)
		}
		t.Fatal(npmErr)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	return filepath.Join(npmDir, "node_modules", ".bin", name)
}

func installed(dir string) bool {
	for _, b := range []string{"mcp-server-filesystem", "mcp-server-memory", "mcp-server-everything"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", b)); err != nil {
			return false
		}
	}
	return true
}
