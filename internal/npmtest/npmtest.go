// Package npmtest installs the pinned npm packages that tests run under
// Node (the MCP TypeScript SDK, the MCP Inspector, playwright-core) into a
// cache shared between runs and between the packages that use them.
package npmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// CacheDir is where npm packages are installed between runs:
// $ORDO_INTEROP_CACHE, else the user cache directory.
func CacheDir(t testing.TB, name string) string {
	t.Helper()
	base := os.Getenv("ORDO_INTEROP_CACHE")
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("no cache directory (set ORDO_INTEROP_CACHE): %v", err)
		}
		base = filepath.Join(c, "ordo-interop")
	}
	return filepath.Join(base, name)
}

var mu sync.Mutex

// Install installs the locked packages of src (a directory with
// package.json and package-lock.json) into a cache directory, once per
// lock file, and copies src's files beside them, so node resolves the
// packages from the scripts' own node_modules. It returns that directory.
func Install(t testing.TB, src string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	dir := CacheDir(t, "npm-"+hex.EncodeToString(sum[:6]))
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stamp := filepath.Join(dir, "node_modules", ".ordo-installed")
	if _, err := os.Stat(stamp); err == nil {
		return dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
	if err := os.WriteFile(stamp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
