package main_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// A script pipes the plan in: --plan - reads it from stdin (before, "open
// -: no such file or directory"), for ordo run and runs fork alike, and
// tools call --input @- its arguments. With
// stdin spent on the plan, a question finds it at its end: the run stops
// resumable (exit 3) rather than waiting.
func TestPlanFromStdin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan, err := os.ReadFile(filepath.Join(repoRoot, firstRun))
	if err != nil {
		t.Fatal(err)
	}
	run := e.ordo(string(plan), "run", "--plan", "-", "--yes", "--json").wantRun(t, 0)
	if run.Status != contracts.RunCompleted || len(run.Steps) != 5 {
		t.Fatalf("status %s, %d steps", run.Status, len(run.Steps))
	}
	e.ordo(string(plan), "run", "--plan", "-").wantErr(t, 3, "approve the plan?")
	fork := e.ordo(string(plan), "runs", "fork", run.ID, "--from", "post_link", "--plan", "-", "--yes", "--json").wantRun(t, 0)
	if fork.ID == run.ID || fork.Status != contracts.RunCompleted {
		t.Fatalf("fork %s: %s", fork.ID, fork.Status)
	}
	e.ordo("not json", "run", "--plan", "-").wantErr(t, 2, "file: -")
	if r := e.ordo("", "run", "--plan", "-"); r.code != 2 || strings.Contains(r.stderr, "no such file") {
		t.Errorf("empty stdin: exit %d\n%s", r.code, r.stderr)
	}
	// tools call --input @- alike.
	e.ordo(`{"items": ["a", "b"]}`, "tools", "call", "text.join", "--input", "@-").wantOut(t, 0, `"a, b"`)
}

// A plan with several schema violations lists each on its own line, where
// it is and what is wrong; before, the details printed Go structs
// ("violations: [{/actions/0/intent /$defs/… value must be …} {…}]").
func TestPlanErrorListsEveryViolation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := filepath.Join(e.home, "bad.plan.json")
	os.WriteFile(plan, []byte(`{"version":"1.0","goal":"g","timezone":"UTC","actions":[
		{"id":"a","tool":"text.join","intent":"post","requires":[],"produces":["text"],"inputs":{}},
		{"id":"b","tool":"text.join","intent":"send","requires":[],"produces":["text"],"inputs":{}}]}`), 0o600)
	r := e.ordo("", "run", "--plan", plan)
	r.wantErr(t, 2, "error 1002")
	for _, want := range []string{"\n  violations:\n", "\n    /actions/0/intent: value must be one of", "\n    /actions/1/intent: value must be one of"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "{/actions") {
		t.Errorf("a Go struct in the output:\n%s", r.stderr)
	}
}

// runs list cut at --limit (50 by default) says so on stderr, so nobody
// takes the newest 50 for all; stdout stays the table or the JSON.
func TestRunsListSaysWhenCut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for range 3 {
		e.ordo("", "tools", "call", "text.join", "--input", `{"items": ["a"]}`).want(t, 0)
	}
	const cut = "more runs than the 2 shown: --limit N shows N, --limit 0 all"
	r := e.ordo("", "runs", "list", "--limit", "2")
	r.wantErr(t, 0, cut)
	if n := strings.Count(r.stdout, "run_"); n != 2 {
		t.Errorf("%d rows:\n%s", n, r.stdout)
	}
	r = e.ordo("", "runs", "list", "--limit", "2", "--json")
	r.wantErr(t, 0, cut)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 2 {
		t.Errorf("json: %d rows, %v\n%s", len(rows), err, r.stdout)
	}
	for _, all := range []string{"3", "0"} {
		if r := e.ordo("", "runs", "list", "--limit", all); r.code != 0 || r.stderr != "" || strings.Count(r.stdout, "run_") != 3 {
			t.Errorf("--limit %s: exit %d, %d rows\n%s%s", all, r.code, strings.Count(r.stdout, "run_"), r.stdout, r.stderr)
		}
	}
}

// The live display shows a goal, a tool's error message and the like
// (anyone's text: a model's, a plugin's, an MCP client's) with control
// characters as "?", as the tables do, so no escape sequence (here OSC 52,
// which sets the clipboard, and a screen clear) acts on the terminal.
func TestDisplayNeutralizesTerminalControls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "run", "--plan", firstRun, "--yes", "Q1\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J summary")
	r.wantErr(t, 0, ": Q1?]52;c;cm0gLXJmIH4=??[2J summary\n")
	if strings.ContainsAny(r.stderr, "\x1b\x07") {
		t.Errorf("an escape reached the terminal:\n%q", r.stderr)
	}
}

// An address given with --http that is taken names the flag, as a bad one
// does (before, only the key http.listen, which the user had not set).
func TestServeHTTPTakenAddressNamesFlag(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	e := newEnv(t)
	e.vars = append(e.vars, "ORDO_HTTP_TOKENS=ada:user:ada-token-0123456789abcdef")
	r := e.ordo("", "serve", "--http", ln.Addr().String())
	r.wantErr(t, 2, "address already in use\n  flag: --http\n  key: http.listen\n")
}
