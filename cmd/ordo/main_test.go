package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testbuild"
)

// The tests build the real ordo binary with the bundled plugins beside it
// (where ordo looks for them) and the example SDK plugin, once, and run
// them as a user would.
var (
	binDir   string // ordo and ordo-plugin-*
	repoRoot string
	hello    string // examples/plugin-hello
)

func TestMain(m *testing.M) {
	os.Exit(testbuild.Main(m, "ordo-cli-test-", func(root, tmp, bin string) error {
		repoRoot, binDir, hello = root, bin, filepath.Join(tmp, "plugin-hello")
		return testbuild.Build(hello, "./examples/plugin-hello")
	}))
}

// env is one isolated user: a home and a data directory of its own.
type env struct {
	t    *testing.T
	home string
	data string
	vars []string
}

func newEnv(t *testing.T) *env {
	home := t.TempDir()
	e := &env{t: t, home: home, data: filepath.Join(home, "data")}
	e.vars = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ORDO_DATA_DIR=" + e.data}
	return e
}

// result is one finished ordo process.
type result struct {
	code           int
	stdout, stderr string
}

// ordo runs the binary from the repository root with stdin and returns
// its exit code and output.
func (e *env) ordo(stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), args...)
	cmd.Dir = repoRoot
	cmd.Env = e.vars
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("ordo %v: %v", args, err)
	}
	return result{code, out.String(), errb.String()}
}

// started starts cmd with its stdout going to the buffer it returns and
// its stderr to be read, as the process writes it, from the pipe.
func started(t *testing.T, cmd *exec.Cmd) (*bytes.Buffer, io.ReadCloser) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &out, stderr
}

func (r result) want(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// wantOut is want, then that r's stdout holds text.
func (r result) wantOut(t *testing.T, code int, text string) {
	t.Helper()
	r.want(t, code)
	if !strings.Contains(r.stdout, text) {
		t.Fatalf("stdout lacks %q:\n%s\nstderr:\n%s", text, r.stdout, r.stderr)
	}
}

// wantErr is want, then that r's stderr holds text.
func (r result) wantErr(t *testing.T, code int, text string) {
	t.Helper()
	r.want(t, code)
	if !strings.Contains(r.stderr, text) {
		t.Fatalf("stderr lacks %q:\n%s", text, r.stderr)
	}
}

// wantRun is want, then run: r exited code with the run record it returns.
func (r result) wantRun(t *testing.T, code int) *contracts.Run {
	t.Helper()
	r.want(t, code)
	return r.run(t)
}

func (r result) run(t *testing.T) *contracts.Run {
	t.Helper()
	var run contracts.Run
	if err := json.Unmarshal([]byte(r.stdout), &run); err != nil {
		t.Fatalf("stdout is not a run record: %v\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return &run
}

const firstRun = "examples/first-run.plan.json"

// widgetPlan is a planner's answer that reads the Widget rows (six) of the
// example sales sheet.
const widgetPlan = `{"version":"1.0","goal":"list widget sales","timezone":"UTC","actions":[
	{"id":"widgets","tool":"sheets.query","intent":"read","requires":[],"produces":["records"],
	 "inputs":{"file":"examples/data/sales.csv","where":"product = Widget","select":["month","units"]}}]}`

// onlyRun fails t unless `runs list` lists one run, in status, and
// returns its id.
func (e *env) onlyRun(t *testing.T, status string) string {
	t.Helper()
	r := e.ordo("", "runs", "list", "--json")
	r.want(t, 0)
	var rows []struct{ ID, Status string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || len(rows) != 1 || rows[0].Status != status {
		t.Fatalf("runs %+v (%v), want one %s", rows, err, status)
	}
	return rows[0].ID
}

// withModel gives e's ordo a model: a scripted OpenAI-compatible server
// answering replies, which it returns. Approvals are off, so a run goes
// from goal to answer.
func (e *env) withModel(replies ...llmtest.Reply) *llmtest.Server {
	srv := llmtest.New(e.t, replies...)
	e.vars = append(e.vars, "ORDO_LLM_BASE_URL="+srv.URL, "ORDO_LLM_MODEL=test-model", "OPENAI_API_KEY=sk-test", "ORDO_HITL_ENABLED=false")
	return srv
}

func TestFirstRunCompletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "run", "--plan", firstRun, "--yes", "--json")
	run := r.wantRun(t, 0)
	if run.Status != contracts.RunCompleted || run.Result == nil || run.Result.Answer == "" {
		t.Fatalf("run %s, result %+v", run.Status, run.Result)
	}
	succeeded := map[string]bool{}
	for _, s := range run.Steps {
		if s.Status == contracts.StepSucceeded {
			succeeded[s.ActionID] = true
		}
	}
	for _, id := range []string{"read_sales", "format_summary", "write_page", "compose_post", "post_link"} {
		if !succeeded[id] {
			t.Errorf("action %s did not succeed", id)
		}
	}
	// The chat post really happened, with the page's link, in the outbox
	// the command pointed to.
	outbox := filepath.Join(e.data, "plugins", "chat", "channels", "general.jsonl")
	if !strings.Contains(r.stderr, "chat outbox: "+outbox) {
		t.Errorf("stderr does not say where the outbox is:\n%s", r.stderr)
	}
	msgs, err := os.ReadFile(outbox)
	if err != nil {
		t.Fatal(err)
	}
	var url string
	_ = json.Unmarshal(run.State["page_url"], &url)
	if url == "" || !strings.Contains(string(msgs), `"text":"The Q1 2026 sales summary is ready: `+url+`"`) {
		t.Errorf("outbox %q lacks the sentence with the page link %q", msgs, url)
	}
	// The page reads as lines, not JSON; the answer is short and keeps the link.
	notes, err := os.ReadFile(filepath.Join(e.data, "plugins", "notes", "notes.json"))
	if err != nil || !strings.Contains(string(notes), `2026-01  North  Widget: 120 units, revenue 2400.00\n`) {
		t.Errorf("the page is not the readable summary: %v\n%s", err, notes)
	}
	if ans := run.Result.Answer; len(ans) > 800 || !strings.Contains(ans, "("+url+")") || !strings.Contains(ans, "(9 items)") || strings.Contains(ans, "page_url") {
		t.Errorf("answer (%d bytes):\n%s", len(ans), ans)
	}
	// Pattern memory learned from the run (collected before exit).
	if learned, _ := os.ReadDir(filepath.Join(e.data, "patterns")); len(learned) == 0 {
		t.Error("nothing was collected into pattern memory")
	}
	// The record is in the store, visible to a later process.
	show := e.ordo("", "runs", "show", run.ID, "--json")
	show.want(t, 0)
	if got := show.run(t); got.Status != contracts.RunCompleted || len(got.Steps) != len(run.Steps) {
		t.Errorf("stored record: %s with %d steps", got.Status, len(got.Steps))
	}
}

// TestInteractiveApproval answers the plan approval and the chat post's
// confirmation on stdin.
func TestInteractiveApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("approve\nyes\n", "run", "--plan", firstRun, "--json")
	run := r.wantRun(t, 0)
	if run.Status != contracts.RunCompleted {
		t.Fatalf("status %s", run.Status)
	}
	var kinds []string
	for _, d := range run.Decisions {
		if d.Decision.By != "local" || d.Decision.Kind != contracts.DecisionApprove {
			t.Errorf("decision %+v", d.Decision)
		}
		kinds = append(kinds, string(d.Interrupt.Kind))
	}
	if strings.Join(kinds, ",") != "plan_approval,step_approval" {
		t.Errorf("interrupts answered: %v", kinds)
	}
	if !strings.Contains(r.stderr, "approve the plan?") || !strings.Contains(r.stderr, "run post_link (chat.post_message)?") {
		t.Errorf("prompts missing from stderr:\n%s", r.stderr)
	}
}

// TestResumeFinishesInterruptedRun: input ends at the first prompt, so the
// run stays interrupted (exit 3); `runs resume` in a new process finishes it.
func TestResumeFinishesInterruptedRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "run", "--plan", firstRun, "--json")
	run := r.wantRun(t, 3)
	if run.Status != contracts.RunInterrupted || run.Interrupt == nil || run.Interrupt.Kind != contracts.InterruptPlanApproval {
		t.Fatalf("status %s, interrupt %+v", run.Status, run.Interrupt)
	}
	if !strings.Contains(r.stderr, "ordo runs resume "+run.ID) {
		t.Errorf("no resume hint:\n%s", r.stderr)
	}
	list := e.ordo("", "runs", "list", "--status", "interrupted")
	list.want(t, 0)
	if !strings.Contains(list.stdout, run.ID) {
		t.Errorf("runs list lacks %s:\n%s", run.ID, list.stdout)
	}
	// Approve the plan, then stop again at the step approval.
	r = e.ordo("a\n", "runs", "resume", run.ID, "--json")
	r.want(t, 3)
	if got := r.run(t); got.Interrupt == nil || got.Interrupt.Kind != contracts.InterruptStepApproval {
		t.Fatalf("after approving the plan: %+v", got.Interrupt)
	}
	r = e.ordo("a\n", "runs", "resume", run.ID, "--json")
	r.want(t, 0)
	if got := r.run(t); got.Status != contracts.RunCompleted || len(got.Decisions) != 2 {
		t.Fatalf("status %s, %d decisions", got.Status, len(got.Decisions))
	}
	// A finished run cannot be resumed: a coded error, non-zero exit.
	r = e.ordo("", "runs", "resume", run.ID)
	if r.code == 0 || !strings.Contains(r.stderr, fmt.Sprint(int(contracts.CodeRunAlreadyFinished))) {
		t.Errorf("resuming a finished run: exit %d\n%s", r.code, r.stderr)
	}
}

func TestRejectAndSkip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("reject not today\n", "run", "--plan", firstRun, "--json")
	r.want(t, 4)
	if run := r.run(t); run.Status != contracts.RunRejected || run.Decisions[0].Decision.Note != "not today" {
		t.Errorf("status %s, decisions %+v", run.Status, run.Decisions)
	}
	// An answer that fits no choice is asked again; skipping the post
	// completes the run without it.
	r = e.ordo("maybe\napprove\nskip\n", "run", "--plan", firstRun, "--json")
	if !strings.Contains(r.stderr, "answer a, e FILE") {
		t.Errorf("no help after a bad answer:\n%s", r.stderr)
	}
	run := r.run(t)
	for _, s := range run.Steps {
		if s.ActionID == "post_link" && s.Status != contracts.StepSkipped {
			t.Errorf("post_link %s", s.Status)
		}
	}
	if _, err := os.Stat(filepath.Join(e.data, "plugins", "chat", "channels", "general.jsonl")); err == nil {
		t.Error("a skipped post reached the outbox")
	}
}

func TestBadConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte("llm:\n  timeout: soon\n"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		vars []string
		says []string
	}{
		{"bad value", []string{"--config", cfg, "runs", "list"}, nil, []string{"1014", "llm.timeout", "a duration"}},
		{"via ORDO_CONFIG", []string{"runs", "list"}, []string{"ORDO_CONFIG=" + cfg}, []string{"1014", "llm.timeout"}},
		{"env override", []string{"runs", "list"}, []string{"ORDO_PARALLELISM=many"}, []string{"1014", "parallelism", "ORDO_PARALLELISM"}},
		{"missing file", []string{"--config", cfg + ".nope", "runs", "list"}, nil, []string{"1014", "no such file"}},
		// --store is checked like the store key (and wins over ORDO_STORE); the
		// value, which may hold a password, is never echoed.
		{"bad --store", []string{"runs", "list", "--store", "mysql://ordo:hunter2@db/ordo"}, []string{"ORDO_STORE=embedded"},
			[]string{"1014", "config key store", "flag: --store"}},
		{"empty --store", []string{"--store", "", "migrate"}, nil, []string{"--store needs a value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e2 := *e
			e2.t = t
			e2.vars = append(append([]string{}, e.vars...), tc.vars...)
			r := e2.ordo("", tc.args...)
			r.want(t, 2)
			for _, s := range tc.says {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if strings.Contains(r.stdout+r.stderr, "hunter2") {
				t.Errorf("a password from --store is echoed:\n%s", r.stderr)
			}
		})
	}
	unknown := filepath.Join(e.home, "unknown.yaml")
	os.WriteFile(unknown, []byte("parallelism: 2\nplugin_dir: /x\n"), 0o600)
	r := e.ordo("", "--config", unknown, "run", "--plan", firstRun)
	r.wantErr(t, 2, "config key plugin_dir: unknown key")
}

func TestBadPlanFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	cases := []struct {
		file string
		code contracts.Code
		exit int
	}{
		{write("not-json.json", "this is not a plan"), contracts.CodeInvalidJSON, 2},
		{write("extra-field.json", `{"version":"1.0","goal":"g","timezone":"UTC","actions":[],"colour":"red"}`), contracts.CodeSchemaViolation, 2},
		{filepath.Join(dir, "missing.json"), contracts.CodeInvalidInput, 2},
		// Schema-valid but names a tool nobody provides: the run fails closed.
		{write("unknown-tool.json", `{"version":"1.0","goal":"g","timezone":"UTC","actions":[
			{"id":"a1","tool":"nope.nothing","intent":"read","requires":[],"produces":[]}]}`), contracts.CodePlanFailed, 1},
	}
	for _, tc := range cases {
		r := e.ordo("", "run", "--plan", tc.file, "--yes")
		r.want(t, tc.exit)
		if !strings.Contains(r.stderr, fmt.Sprintf("error %d", tc.code)) {
			t.Errorf("%s: stderr lacks code %d:\n%s", filepath.Base(tc.file), tc.code, r.stderr)
		}
	}
	r := e.ordo("", "run")
	r.want(t, 2)
	r = e.ordo("", "run", "--frobnicate")
	r.want(t, 2)
}

func TestPluginsAddListRemove(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "plugins", "add", hello, "--name", "hello")
	r.wantOut(t, 0, "hello.greet")
	manifest, err := os.ReadFile(filepath.Join(e.data, "plugins.d", "hello.sha256"))
	if err != nil || len(strings.Fields(string(manifest))[0]) != 64 {
		t.Fatalf("manifest %q: %v", manifest, err)
	}
	r = e.ordo("", "plugins", "list", "--json")
	r.want(t, 0)
	var infos []struct{ Name, Origin, State string }
	if err := json.Unmarshal([]byte(r.stdout), &infos); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range infos {
		if p.Name == "hello" && p.Origin == "dir" {
			found = true
		}
	}
	if !found {
		t.Errorf("plugins list lacks hello from the plugins dir: %+v", infos)
	}
	// The new tool runs in a plan.
	plan := filepath.Join(t.TempDir(), "greet.json")
	os.WriteFile(plan, []byte(`{"version":"1.0","goal":"greet Ada","timezone":"UTC","actions":[
		{"id":"greet","tool":"hello.greet","intent":"other","requires":[],"produces":["greeting"],"inputs":{"name":"Ada"}}]}`), 0o600)
	r = e.ordo("", "run", "--plan", plan, "--yes", "--json")
	r.want(t, 0)
	if got := string(r.run(t).State["greeting"]); got != `"Hello, Ada!"` {
		t.Errorf("greeting %s", got)
	}
	r = e.ordo("", "plugins", "add", hello, "--name", "hello")
	r.want(t, 2)
	r = e.ordo("", "plugins", "add", hello, "--name", "chat")
	r.want(t, 2)
	// --force replaces it, and --json says what was installed.
	r = e.ordo("", "plugins", "add", hello, "--name", "hello", "--force", "--json")
	r.want(t, 0)
	var added struct {
		Installed, SHA256 string
		Tools             []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &added); err != nil || added.Installed != "hello" || len(added.SHA256) != 64 ||
		!slices.Contains(added.Tools, "hello.greet") {
		t.Errorf("add --json: %+v, %v\n%s", added, err, r.stdout)
	}
	r = e.ordo("", "plugins", "remove", "hello", "--json")
	r.wantOut(t, 0, `"removed": "hello"`)
	r = e.ordo("", "tools", "list")
	r.want(t, 0)
	if strings.Contains(r.stdout, "hello.greet") || !strings.Contains(r.stdout, "notes.create_page") {
		t.Errorf("tools after remove:\n%s", r.stdout)
	}
	r = e.ordo("", "plugins", "remove", "hello")
	r.want(t, 2)
}

func TestRunsPruneAndVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.ordo("", "run", "--plan", firstRun, "--yes").want(t, 0)
	e.ordo("", "run", "--plan", firstRun).want(t, 3) // interrupted: never pruned
	r := e.ordo("", "runs", "prune", "--older-than", "1ns")
	r.wantOut(t, 0, "pruned 1 ")
	e.onlyRun(t, "interrupted")
	r = e.ordo("", "version")
	r.want(t, 0)
	if !strings.HasPrefix(r.stdout, "ordo ") {
		t.Errorf("version: %q", r.stdout)
	}
}

// TestHelpHasExamples: every command documents itself with examples.
func TestHelpHasExamples(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range [][]string{{}, {"run"}, {"serve"}, {"runs"}, {"runs", "list"}, {"runs", "show"}, {"runs", "resume"},
		{"runs", "prune"}, {"tools"}, {"tools", "list"}, {"tools", "search"}, {"tools", "eval"}, {"plugins"},
		{"plugins", "list"}, {"plugins", "add"}, {"plugins", "remove"}, {"migrate"}, {"version"},
		{"runs", "save-template"}, {"memory"}, {"memory", "list"}, {"memory", "show"}, {"memory", "forget"}} {
		r := e.ordo("", append(c, "--help")...)
		r.want(t, 0)
		if !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("ordo %s --help has no examples", strings.Join(c, " "))
		}
	}
}

// TestScenarioPlans runs every example plan under examples/scenarios and
// checks each ends the way its goal says.
func TestScenarioPlans(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		exit int
		code contracts.Code // the error printed, when the run fails
	}{
		"seed000-1-one-tool.plan.json":             {0, 0},
		"seed000-2-multi-step.plan.json":           {0, 0},
		"seed000-3-tool-failure.plan.json":         {3, contracts.CodeToolFailed}, // no model: step_failed asks, stdin is empty
		"seed000-4-invalid.plan.json":              {2, contracts.CodeInvalidJSON},
		"seed004-1-page-then-post.plan.json":       {0, 0},
		"seed004-2-unsatisfied-requires.plan.json": {1, contracts.CodePlanFailed},
	}
	files, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "scenarios", "*.json"))
	if len(files) != len(want) {
		t.Errorf("examples/scenarios has %d plans, the test knows %d", len(files), len(want))
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			r := newEnv(t).ordo("", "run", "--plan", f, "--yes")
			r.want(t, w.exit)
			if w.code != 0 && !strings.Contains(r.stderr, fmt.Sprintf("error %d", w.code)) {
				t.Errorf("stderr lacks error %d:\n%s", w.code, r.stderr)
			}
		})
	}
}

// TestPluginsAddUpstream mounts a real MCP server over stdio (another ordo,
// serving MCP) with `plugins add --mcp ... --save`, then runs a plan that
// calls one of its tools.
func TestPluginsAddUpstream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte("# mine\nparallelism: 2\n"), 0o600)
	inner := filepath.Join(binDir, "ordo") + " serve"
	r := e.ordo("", "--config", cfg, "plugins", "add", "--mcp", inner, "--name", "inner", "--save")
	r.wantOut(t, 0, "inner.list_runs")
	saved, _ := os.ReadFile(cfg)
	if !strings.Contains(string(saved), "# mine") || !strings.Contains(string(saved), "name: inner") {
		t.Errorf("saved config:\n%s", saved)
	}
	plan := filepath.Join(e.home, "runs.json")
	os.WriteFile(plan, []byte(`{"version":"1.0","goal":"list the inner runs","timezone":"UTC","actions":[
		{"id":"inner_runs","tool":"inner.list_runs","intent":"read","requires":[],"produces":[]}]}`), 0o600)
	r = e.ordo("", "--config", cfg, "run", "--plan", plan, "--yes", "--json")
	r.want(t, 0)
	// A name already taken is refused before anything starts.
	r = e.ordo("", "--config", cfg, "plugins", "add", "--mcp", inner, "--name", "inner")
	r.want(t, 2)
	r = e.ordo("", "plugins", "add", hello, "--mcp", inner, "--name", "x")
	r.want(t, 2)
	// --token-env is accepted (the URL answers nobody: refused, 6005).
	e.vars = append(e.vars, "WEB_TOKEN=web-token-0123456789")
	r = e.ordo("", "plugins", "add", "--mcp-url", "http://127.0.0.1:1/mcp", "--token-env", "WEB_TOKEN", "--name", "web")
	if r.code == 0 || !strings.Contains(r.stderr, "6005") {
		t.Errorf("--mcp-url --token-env: exit %d\n%s", r.code, r.stderr)
	}
	// --url-secret-env fills the URL's {secret}, which no error shows;
	// unset, it is error 1000.
	r = e.ordo("", "plugins", "add", "--mcp-url", "http://127.0.0.1:1/s/{secret}/mcp", "--url-secret-env", "WEB_KEY", "--name", "webk")
	if r.code != 2 || !strings.Contains(r.stderr, "WEB_KEY (--url-secret-env) is unset") {
		t.Errorf("--url-secret-env unset: exit %d\n%s", r.code, r.stderr)
	}
	e.vars = append(e.vars, "WEB_KEY=web-path-key-0123456789")
	r = e.ordo("", "plugins", "add", "--mcp-url", "http://127.0.0.1:1/s/{secret}/mcp", "--url-secret-env", "WEB_KEY", "--name", "webk")
	if r.code == 0 || !strings.Contains(r.stderr, "6005") || !strings.Contains(r.stderr, "/s/%7Bsecret%7D/mcp") ||
		strings.Contains(r.stderr, "web-path-key") {
		t.Errorf("--mcp-url --url-secret-env: exit %d\n%s", r.code, r.stderr)
	}
	// remove deletes the entry from the file, comments kept.
	r = e.ordo("", "--config", cfg, "plugins", "remove", "inner")
	r.want(t, 0)
	saved, _ = os.ReadFile(cfg)
	if !strings.Contains(string(saved), "# mine") || strings.Contains(string(saved), "name: inner") {
		t.Errorf("config after remove:\n%s", saved)
	}
	r = e.ordo("", "--config", cfg, "plugins", "list")
	r.want(t, 0)
	if strings.Contains(r.stdout, "inner") {
		t.Errorf("inner still listed:\n%s", r.stdout)
	}
}

func TestToolsSearchAndEval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "tools", "search", "post a message to a chat channel", "-k", "3", "--json")
	r.want(t, 0)
	// At most k: a tool sharing no word with the request is no hit.
	var hits []struct{ Tool string }
	if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil || len(hits) == 0 || len(hits) > 3 {
		t.Fatalf("hits %s: %v", r.stdout, err)
	}
	found := false
	for _, h := range hits {
		found = found || h.Tool == "chat.post_message"
	}
	if !found {
		t.Errorf("chat.post_message not in the top 3: %+v", hits)
	}
	dir := filepath.Join(repoRoot, "cmd", "ordo", "testdata", "eval")
	r = e.ordo("", "tools", "eval", "--tools", filepath.Join(dir, "tools.jsonl"), "--queries", filepath.Join(dir, "queries.jsonl"), "--json")
	r.want(t, 0)
	if !strings.Contains(r.stdout, `"queries": 4`) && !strings.Contains(r.stdout, `"queries":4`) {
		t.Errorf("eval report does not cover the 4 queries:\n%s", r.stdout)
	}
	e.ordo("", "tools", "eval", "--tools", filepath.Join(dir, "tools.jsonl")).want(t, 2)
}

// TestEditRefusedThenApproved: an edited plan that does not check is
// refused (the run stays as it was) and the prompt asks again.
func TestEditRefusedThenApproved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bad := filepath.Join(e.home, "edited.json")
	os.WriteFile(bad, []byte(`{"version":"1.0","goal":"g","timezone":"UTC","actions":[
		{"id":"a1","tool":"nope.nothing","intent":"read","requires":[],"produces":[]}]}`), 0o600)
	r := e.ordo("edit "+bad+"\napprove\napprove\n", "run", "--plan", firstRun, "--json")
	r.want(t, 0)
	if !strings.Contains(r.stderr, "refused: ") || !strings.Contains(r.stderr, "nope.nothing") {
		t.Errorf("the bad edit was not refused with its reason:\n%s", r.stderr)
	}
	if run := r.run(t); len(run.Plans) != 1 || run.Status != contracts.RunCompleted {
		t.Errorf("plans %d, status %s", len(run.Plans), run.Status)
	}
}

// TestMemoryAndTemplates: a completed run saved as a template runs again
// with new inputs and no model; memory list/show/forget read and delete
// what the runs taught, per user.
func TestMemoryAndTemplates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "run", "--plan", firstRun, "--yes", "--json")
	first := r.wantRun(t, 0)
	interrupted := e.ordo("", "run", "--plan", firstRun, "--json").run(t)
	r = e.ordo("", "runs", "save-template", interrupted.ID, "q1")
	r.want(t, 2) // only a completed run's plan can be a template
	r = e.ordo("", "runs", "save-template", first.ID, "q1")
	r.wantOut(t, 0, `template "q1" of user "local" (5 actions)`)

	r = e.ordo("", "run", "--template", "q1", "--input", "write_page.title=Q1 again", "--input", `compose_post.values.who="the team"`, "--yes", "--json")
	again := r.wantRun(t, 0)
	if again.Status != contracts.RunCompleted || again.Plans[0].Source != "template" || again.Goal != first.Goal {
		t.Fatalf("template run: %s, source %s, goal %q", again.Status, again.Plans[0].Source, again.Goal)
	}
	for _, s := range again.Steps {
		var p struct {
			Title  string
			Values struct {
				Who     string
				PageURL string `json:"page_url"`
			}
		}
		_ = json.Unmarshal(s.Payload, &p)
		if s.ActionID == "write_page" && s.Status == contracts.StepSucceeded && p.Title != "Q1 again" {
			t.Errorf("write_page payload %s", s.Payload)
		}
		if s.ActionID == "compose_post" && s.Status == contracts.StepSucceeded && (p.Values.Who != "the team" || p.Values.PageURL == "") {
			t.Errorf("compose_post payload %s", s.Payload)
		}
	}
	for _, bad := range [][]string{
		{"run", "--template", "nope", "--yes"},
		{"run", "--template", "q1", "--input", "nobody.title=x", "--yes"},
		{"run", "--template", "q1", "--input", "no-equals-sign"},
		{"run", "--template", "q1", "--plan", firstRun},
		{"run", "--plan", firstRun, "--input", "write_page.title=x"},
	} {
		e.ordo("", bad...).want(t, 2)
	}

	list := func(args ...string) []struct{ ID, Namespace, Name string } {
		t.Helper()
		r := e.ordo("", append([]string{"memory", "list", "--json"}, args...)...)
		r.want(t, 0)
		var rs []struct{ ID, Namespace, Name string }
		if err := json.Unmarshal([]byte(r.stdout), &rs); err != nil {
			t.Fatalf("memory list: %v\n%s", err, r.stdout)
		}
		return rs
	}
	byNS := map[string][]string{}
	for _, rec := range list() {
		byNS[rec.Namespace] = append(byNS[rec.Namespace], rec.ID)
	}
	if len(byNS["plan"]) != 1 || len(byNS["tool"]) < 4 || len(byNS["workflow"]) != 1 {
		t.Fatalf("remembered: %v", byNS)
	}
	if got := list("--user", "bob"); len(got) != 0 {
		t.Errorf("bob's memory: %+v", got)
	}
	r = e.ordo("", "memory", "list")
	r.want(t, 0)
	if !strings.Contains(r.stdout, "template q1: ") || !strings.Contains(r.stdout, "2 ok, 0 failed") {
		t.Errorf("memory list:\n%s", r.stdout)
	}
	r = e.ordo("", "memory", "show", byNS["plan"][0])
	r.want(t, 0)
	if !strings.Contains(r.stdout, `"namespace": "plan"`) || !strings.Contains(r.stdout, `"tool": "chat.post_message"`) {
		t.Errorf("memory show:\n%s", r.stdout)
	}
	e.ordo("", "memory", "show", byNS["plan"][0], "--user", "bob").want(t, 2) // another user's record is missing
	e.ordo("", "memory", "list", "--namespace", "nonsense").want(t, 2)

	// Forget: nothing without a target or --all; one by id; a template by name; a namespace.
	r = e.ordo("", "memory", "forget")
	r.wantErr(t, 2, "--all")
	e.ordo("", "memory", "forget", byNS["tool"][0], "--template", "q1").want(t, 2)
	e.ordo("", "memory", "forget", byNS["tool"][0]).want(t, 0)
	e.ordo("", "memory", "forget", byNS["tool"][0]).want(t, 2) // gone: a typo is not success
	r = e.ordo("", "memory", "forget", "--template", "q1")
	r.wantOut(t, 0, "forgot 1 workflow record(s)")
	e.ordo("", "run", "--template", "q1", "--yes").want(t, 2)
	r = e.ordo("", "memory", "forget", "--namespace", "tool", "--all")
	r.want(t, 0)
	if !strings.Contains(r.stdout, fmt.Sprintf("forgot %d tool record(s)", len(byNS["tool"])-1)) {
		t.Errorf("forget --namespace tool --all: %s", r.stdout)
	}
	if got := list("--namespace", "tool"); len(got) != 0 {
		t.Errorf("tool records left: %+v", got)
	}
	e.ordo("", "memory", "forget", "--all").want(t, 0)
	if got := list(); len(got) != 0 {
		t.Errorf("records left after forget --all: %+v", got)
	}
}
