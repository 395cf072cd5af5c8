package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// hint returns the command the line starting with prefix tells the person
// to run, as arguments for e.ordo: "run record: ordo runs show ID   (store
// …)" gives ["runs", "show", "ID"].
func hint(t *testing.T, stderr, prefix string) []string {
	t.Helper()
	for line := range strings.Lines(stderr) {
		if cmd, ok := strings.CutPrefix(line, prefix); ok {
			cmd, _, _ = strings.Cut(cmd, "   (")
			words := strings.Fields(cmd)
			if len(words) == 0 || words[0] != "ordo" {
				t.Fatalf("hint %q is not an ordo command", line)
			}
			return words[1:]
		}
	}
	t.Fatalf("no %q line in:\n%s", prefix, stderr)
	return nil
}

// TestFirstRunHintsWork: the commands a run prints work as printed. `make
// run` (its recipe, the binaries already built) and the hinted command,
// both with nothing set, use the same, default, data directory; with
// --data-dir, the hint carries the flag, and the store it names is that
// directory's.
func TestFirstRunHintsWork(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	e := newEnv(t)
	e.vars = []string{"HOME=" + e.home, "PATH=" + os.Getenv("PATH")} // nothing of Ordo's set
	mk := exec.Command("make", "-s", "-o", "build", "run", "BIN="+binDir)
	mk.Dir, mk.Env = repoRoot, e.vars
	out, err := mk.CombinedOutput()
	if err != nil {
		t.Fatalf("make run: %v\n%s", err, out)
	}
	r := result{stderr: string(out)}
	def := filepath.Join(e.home, ".local", "share", "ordo")
	if !strings.Contains(r.stderr, "(store "+filepath.Join(def, "ordo.db")+")") {
		t.Errorf("the run does not say which store it used:\n%s", r.stderr)
	}
	show := e.ordo("", hint(t, r.stderr, "run record: ")...)
	show.wantOut(t, 0, "completed")
	// An interrupted run's resume hint works too.
	r = e.ordo("", "run", "--plan", firstRun)
	r.want(t, 3)
	e.ordo("approve\nyes\n", hint(t, r.stderr, "the run is interrupted; continue it with: ")...).want(t, 0)

	// --data-dir beats ORDO_DATA_DIR and the file's data_dir, and is what
	// the store line names; the default directory does not have the run.
	dir := filepath.Join(e.home, "elsewhere")
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte("data_dir: from-file\n"), 0o600)
	e.vars = append(e.vars, "ORDO_DATA_DIR="+filepath.Join(e.home, "from-env"))
	r = e.ordo("", "--config", cfg, "--data-dir", dir, "run", "--plan", firstRun, "--yes", "--json")
	id := r.wantRun(t, 0).ID
	if !strings.Contains(r.stderr, "(store "+filepath.Join(dir, "ordo.db")+")") {
		t.Errorf("the store line does not name --data-dir's store:\n%s", r.stderr)
	}
	e.ordo("", hint(t, r.stderr, "run record: ")...).want(t, 0)  // it carries --config and --data-dir
	e.ordo("", "runs", "show", id, "--data-dir", dir).want(t, 0) // after the command too
	missing := e.ordo("", "runs", "show", id)
	if missing.code == 0 || !strings.Contains(missing.stderr, fmt.Sprintf("error %d", contracts.CodeRunNotFound)) {
		t.Errorf("the run is visible outside --data-dir: exit %d\n%s", missing.code, missing.stderr)
	}
	bad := e.ordo("", "--data-dir", "", "runs", "list")
	bad.wantErr(t, 2, "--data-dir needs a value")
}

// TestStoreFlagOnlyWhereAStoreIsUsed: --store belongs to run, serve, runs
// and migrate (before or after the command name); other commands refuse
// it as a usage error.
func TestStoreFlagOnlyWhereAStoreIsUsed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ordo("", "--store", "embedded", "migrate").want(t, 0)
	e.ordo("", "runs", "list", "--store", "embedded").want(t, 0)
	for _, args := range [][]string{{"tools", "list", "--store", "embedded"}, {"--store", "embedded", "memory", "list"}, {"version", "--store", "embedded"}} {
		r := e.ordo("", args...)
		r.want(t, 2)
		if !strings.Contains(r.stderr, "unknown flag: --store") {
			t.Errorf("%v:\n%s", args, r.stderr)
		}
	}
	r := e.ordo("", "runs", "--help")
	if !strings.Contains(r.stdout, "--store") || !strings.Contains(r.stdout, "--data-dir") {
		t.Errorf("runs --help lacks --store or --data-dir:\n%s", r.stdout)
	}
	if r := e.ordo("", "tools", "--help"); strings.Contains(r.stdout, "--store") {
		t.Errorf("tools --help offers --store:\n%s", r.stdout)
	}
}
