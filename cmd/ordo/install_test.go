package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/internal/testbuild"
)

// versionLine is what `ordo version` prints: version, commit (or
// "unknown" when the build recorded none), Go version, platform.
var versionLine = regexp.MustCompile(`^ordo (\S+) \(commit ([0-9a-f]{40}|unknown)( modified)?, go\S+, [a-z0-9]+/[a-z0-9]+\)\n$`)

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cmd, flag := e.ordo("", "version"), e.ordo("", "--version")
	cmd.want(t, 0)
	flag.want(t, 0)
	if !versionLine.MatchString(cmd.stdout) || flag.stdout != cmd.stdout {
		t.Errorf("ordo version printed %q and ordo --version %q", cmd.stdout, flag.stdout)
	}
}

// `make install PREFIX=DIR` puts ordo and the bundled plugins in DIR/bin;
// the installed ordo, run where there is no ./bin, finds every bundled
// plugin beside it and names its version and commit.
func TestMakeInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ordo")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	t.Parallel()
	prefix := t.TempDir()
	// TRIMPATH= keeps the paths so the build reuses TestMain's build cache;
	// the rest of the release flags are as in `make install`.
	mk := exec.Command("make", "install", "PREFIX="+prefix, "VERSION=v0.0.0-test", "TRIMPATH=")
	mk.Dir = repoRoot
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	bin := filepath.Join(prefix, "bin")
	for _, name := range append([]string{"ordo"}, testbuild.Bundled...) {
		if name != "ordo" {
			name = "ordo-plugin-" + name
		}
		if st, err := os.Stat(filepath.Join(bin, name)); err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s is not an executable in %s: %v", name, bin, err)
		}
	}

	e := newEnv(t)
	ordo := filepath.Join(bin, "ordo")
	r := e.ordoIn(ordo, e.home, "tools", "list")
	r.want(t, 0)
	for _, tool := range []string{"files.read", "notes.create_page", "sheets.query", "text.template", "chat.post_message"} {
		if !strings.Contains(r.stdout, tool) {
			t.Errorf("the installed ordo lacks %s:\n%s\n%s", tool, r.stdout, r.stderr)
		}
	}
	r = e.ordoIn(ordo, e.home, "version")
	m := versionLine.FindStringSubmatch(r.stdout)
	if m == nil || m[1] != "v0.0.0-test" {
		t.Fatalf("the installed ordo's version: %q", r.stdout)
	}
	// In a git checkout, the commit is the one checked out.
	if head, err := exec.Command("git", "-C", repoRoot, "rev-parse", "HEAD").Output(); err == nil && m[2] != strings.TrimSpace(string(head)) {
		t.Errorf("the installed ordo names commit %s, HEAD is %s", m[2], head)
	}
}
