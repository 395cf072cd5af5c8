package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTypoIsUsageError: a mistyped command, subcommand or flag is a usage
// error (exit 2) that suggests the word meant and names the help of the
// command it was typed under. Before, 'ordo srve' was "error 9001
// (internal)" with exit 1, and 'ordo runs lst', 'ordo completion tcsh' or
// 'ordo help srve' printed a help and exited 0, so a script took the typo for
// success. A missing argument shows the command's usage line.
func TestTypoIsUsageError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		says []string
	}{
		{[]string{"srve"}, []string{`unknown command "srve" for "ordo"; did you mean serve?`, "Run 'ordo --help' for usage."}},
		{[]string{"runs", "lst"}, []string{`unknown command "lst" for "ordo runs"; did you mean list?`, "Run 'ordo runs --help'"}},
		{[]string{"help", "srve"}, []string{`unknown command "srve" for "ordo"; did you mean serve?`, "Run 'ordo --help' for usage."}},
		{[]string{"help", "runs", "lst"}, []string{`unknown command "lst" for "ordo runs"; did you mean list?`, "Run 'ordo runs --help'"}},
		{[]string{"completion", "tcsh"}, []string{`unknown command "tcsh" for "ordo completion"`, "Run 'ordo completion --help'"}},
		{[]string{"run", "--plann", "x.json"}, []string{"unknown flag: --plann; did you mean --plan?", "Run 'ordo run --help' for usage."}},
		{[]string{"runs", "list", "--jsn"}, []string{"unknown flag: --jsn\n", "Run 'ordo runs list --help'"}},
		// A long flag with one dash, as Go's flag package takes it.
		{[]string{"run", "-plan", "x.json"}, []string{"unknown shorthand flag: 'p' in -plan; did you mean --plan?"}},
		{[]string{"runs", "list", "-json"}, []string{"in -json; did you mean --json?"}},
		{[]string{"run", "-yes"}, []string{"in -es; did you mean --yes?"}}, // pflag took -y first
		// A missing argument says which one, not only how many.
		{[]string{"runs", "resume"}, []string{"takes 1 argument(s), got 0 (usage: ordo runs resume RUN_ID [--wait] [flags])", "Run 'ordo runs resume --help'"}},
	} {
		r := e.ordo("", tc.args...)
		r.want(t, 2)
		for _, s := range tc.says {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("ordo %s: stderr lacks %q:\n%s", strings.Join(tc.args, " "), s, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "9001") || r.stdout != "" {
			t.Errorf("ordo %s: an internal error or help on stdout:\nstdout:\n%s\nstderr:\n%s", strings.Join(tc.args, " "), r.stdout, r.stderr)
		}
	}
	// A group alone still prints its help and succeeds, as help does.
	e.ordo("", "runs").wantOut(t, 0, "Available Commands:")
	e.ordo("", "help", "runs", "list").wantOut(t, 0, "List runs, newest first")
}

// TestBadValueNamesItsSource: a bad value names where it came from, the
// variable (set in a shell profile, say) or the flag that stood in for it,
// never both, and a configuration error is not sent to --help.
func TestBadValueNamesItsSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "runs", "list", "--timezone", "Mars/Base")
	r.wantErr(t, 2, "  flag: --timezone\n")
	if strings.Contains(r.stderr, "env:") || strings.Contains(r.stderr, "--help") {
		t.Errorf("--timezone: stderr names a variable or --help:\n%s", r.stderr)
	}
	// --http's address is checked as http.listen is, port range included,
	// and reported as a coded error naming the flag (was "ordo 1014: config
	// key --http" as a usage error; port 99999 reached the listener).
	for _, addr := range []string{"nonsense", "127.0.0.1:99999"} {
		r = e.ordo("", "serve", "--http", addr)
		r.wantErr(t, 2, "ordo: error 1014 (validation): config key http.listen: expected a listen address host:port")
		if !strings.Contains(r.stderr, "  flag: --http\n") {
			t.Errorf("--http %s: stderr lacks the flag:\n%s", addr, r.stderr)
		}
	}
	e.vars = append(e.vars, "ORDO_LOG_FORMAT=xml")
	r = e.ordo("", "runs", "list")
	r.wantErr(t, 2, "  env: ORDO_LOG_FORMAT\n")
	if strings.Contains(r.stderr, "--help") {
		t.Errorf("a configuration error sends the user to --help:\n%s", r.stderr)
	}
}

// TestPrintedNextStepWorks: the next step `ordo run` prints (show the
// record, resume the run, follow its events) carries the --data-dir it was given, quoted, so
// pasted into a shell it reaches the same run; it lacked the flag and
// found nothing.
func TestPrintedNextStepWorks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(e.home, "my data", "ördo")
	e.vars = []string{"HOME=" + e.home, "PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH")}
	r := e.ordo("", "--data-dir", dir, "run", "--plan", firstRun)
	r.want(t, 3)
	_, line, ok := strings.Cut(r.stderr, "continue it with: ")
	if !ok {
		t.Fatalf("no next step printed:\n%s", r.stderr)
	}
	line, _, _ = strings.Cut(line, "\n")
	if !strings.Contains(line, "--data-dir '"+dir+"'") {
		t.Errorf("the next step lacks the quoted --data-dir: %s", line)
	}
	// So does the next step 'runs events' prints for a run still moving.
	id := line[strings.LastIndex(line, " ")+1:]
	ev := e.ordo("", "--data-dir", dir, "runs", "events", id)
	ev.want(t, 0)
	_, next, ok := strings.Cut(ev.stderr, "continue with: ")
	next, _, _ = strings.Cut(next, "\n")
	if !ok || !strings.Contains(next, "--data-dir '"+dir+"'") {
		t.Fatalf("runs events: no next step with --data-dir:\n%s", ev.stderr)
	}
	events := exec.Command("sh", "-c", next)
	events.Dir, events.Env = repoRoot, e.vars
	if out, err := events.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", next, err, out)
	}
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env, cmd.Stdin = repoRoot, e.vars, strings.NewReader("a\na\n")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Done: Summarise") {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
}

// TestCarelessArguments: values a newcomer gets wrong are refused naming
// the fix, not taken for an empty answer or blamed on something else:
// 'runs list --status bogus' printed "(no runs)", and 'plugins add
// README.md' blamed a plugin name the user never gave.
func TestCarelessArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ordo("", "runs", "list", "--status", "bogus").
		wantErr(t, 2, `--status "bogus": want one of pending, ready, running, interrupted, completed, failed, rejected, cancelled`)
	e.ordo("", "plugins", "add", "README.md").
		wantErr(t, 2, "(the name comes from the file README.md; --name NAME gives another)")
}
