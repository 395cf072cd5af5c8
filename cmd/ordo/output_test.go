package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
)

// The output people read (issue 18): tables, not Go values; --json on
// every command that prints; completion; config validate|show; tools call;
// runs delete.

// TestRunsShowIsATable: `runs show` prints one row per action with its
// final status, attempts and duration (not a started and a succeeded row
// per step), the decisions people made, and no Go map syntax; `runs list`
// has a user column; the commands that report a count print JSON too.
func TestRunsShowIsATable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	done := e.ordo("", "run", "--plan", firstRun, "--yes", "--json")
	run := done.wantRun(t, 0)
	waiting := e.ordo("a\n", "run", "--plan", firstRun, "--json")
	waiting.want(t, 3)

	r := e.ordo("", "runs", "show", run.ID)
	r.want(t, 0)
	row := regexp.MustCompile(`(?m)^(\S+)\s+(\S+)\s+(allow|require_confirm)\s+succeeded\s+1\s+\d[\d.]*(µs|ms|s)\s*$`)
	rows := row.FindAllStringSubmatch(r.stdout, -1)
	if len(rows) != 5 || !strings.Contains(r.stdout, "ACTION  ") || strings.Contains(r.stdout, "map[") {
		t.Fatalf("want a header and 5 rows, one per action:\n%s", r.stdout)
	}
	for i, id := range []string{"read_sales", "format_summary", "write_page", "compose_post", "post_link"} {
		if rows[i][1] != id || strings.Count(r.stdout, id) != 1 {
			t.Errorf("row %d is %q, want %s once", i, rows[i][1], id)
		}
	}
	r = e.ordo("", "runs", "show", waiting.run(t).ID)
	r.want(t, 0)
	for _, want := range []string{`(?m)^post_link\s+chat.post_message\s+require_confirm\s+waiting \(step_approval\)\s+0\s+-`,
		`(?m)^INTERRUPT\s+DECISION\s+BY\s+AT\s+NOTE$`, `(?m)^plan_approval\s+approve\s+local\s`} {
		if !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Errorf("show of the waiting run lacks %s:\n%s", want, r.stdout)
		}
	}

	r = e.ordo("", "runs", "list")
	r.want(t, 0)
	if !regexp.MustCompile(`(?m)^ID\s+STATUS\s+USER\s+UPDATED\s+GOAL$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^`+run.ID+`\s+completed\s+local\s`).MatchString(r.stdout) {
		t.Errorf("runs list:\n%s", r.stdout)
	}

	for _, c := range []struct {
		args []string
		keys []string
	}{
		{[]string{"runs", "save-template", run.ID, "q1", "--json"}, []string{"run_id", "template", "user_id", "actions"}},
		{[]string{"runs", "prune", "--older-than", "1h", "--json"}, []string{"pruned", "older_than"}},
		{[]string{"runs", "compact", "--json"}, []string{"compacted"}},
		{[]string{"memory", "forget", "--template", "q1", "--json"}, []string{"forgot", "namespace", "user"}},
	} {
		r := e.ordo("", c.args...)
		r.want(t, 0)
		var v map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("ordo %v --json: %v\n%s", c.args, err, r.stdout)
		}
		for _, k := range c.keys {
			if _, ok := v[k]; !ok {
				t.Errorf("ordo %v --json lacks %q: %s", c.args, k, r.stdout)
			}
		}
	}

	r = e.ordo("", "tools", "search", "post a message to a chat channel", "-k", "2")
	r.want(t, 0)
	if !regexp.MustCompile(`(?m)^RANK\s+TOOL\s+SCORE\s+RISK\s+DESCRIPTION\n1\s+chat\.post_message\s+(0\.\d\d|1\.00)\s`).MatchString(r.stdout) {
		t.Errorf("tools search lacks ranks with 0..1 relevance scores:\n%s", r.stdout)
	}
	r = e.ordo("", "tools", "search", "post a message to a chat channel", "-k", "2", "--json")
	r.want(t, 0)
	var hits []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil || len(hits) != 2 || hits[0]["rank"] != 1.0 || hits[0]["tool"] == nil || hits[0]["contract"] == nil {
		t.Errorf("tools search --json: %v\n%s", err, r.stdout)
	}
}

// TestModelCallsShown: each model call is a line of the progress with its
// role and duration (off a terminal no spinner is drawn: no control
// characters), and `runs show` lists the calls as "planner 1, composer 1".
func TestModelCallsShown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.withModel(
		llmtest.Reply{Role: "planner", Content: widgetPlan},
		llmtest.Reply{Role: "composer", Content: "Widgets sold in six rows of Q1."})
	r := e.ordo("", "run", "List the widget sales", "--json")
	r.want(t, 0)
	planner := regexp.MustCompile(`(?m)^  ◆ planner\s+model  \S+$`).FindStringIndex(r.stderr)
	composer := regexp.MustCompile(`(?m)^  ◆ composer\s+model  \S+$`).FindStringIndex(r.stderr)
	step := strings.Index(r.stderr, "✓ widgets")
	if planner == nil || composer == nil || step < 0 || !(planner[0] < step && step < composer[0]) {
		t.Errorf("want the planner's call, the step, then the composer's call:\n%s", r.stderr)
	}
	if strings.ContainsAny(r.stderr, "\r\x1b") {
		t.Errorf("a spinner was drawn on a pipe:\n%q", r.stderr)
	}
	show := e.ordo("", "runs", "show", r.run(t).ID)
	show.want(t, 0)
	if !regexp.MustCompile(`(?m)^llm calls\s+planner 1, composer 1$`).MatchString(show.stdout) {
		t.Errorf("runs show:\n%s", show.stdout)
	}
}

// TestToolsCall: one tool tried through the direct-call path: the result
// on stdout, the call recorded as a run; policy's confirmation asked on
// stdin (or given by --yes); bad names and input refused with codes.
func TestToolsCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.ordo("", "tools", "call", "text.join", "--input", `{"items": ["a", "b"], "separator": "+"}`)
	r.want(t, 0)
	var out map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out["text"] != "a+b" {
		t.Fatalf("result %v: %s\n%s", err, r.stdout, r.stderr)
	}
	r = e.ordo("", "tools", "call", "text.join", "--input", `{"items": ["x"]}`, "--json")
	r.want(t, 0)
	if run := r.run(t); !run.Options.Direct || run.Status != contracts.RunCompleted || len(run.Plans[0].Plan.Actions) != 1 {
		t.Errorf("record: %+v", run)
	}

	// chat.post_message is one policy confirms (policy.confirm_tools).
	outbox := filepath.Join(e.data, "plugins", "chat", "channels", "general.jsonl")
	post := []string{"tools", "call", "chat.post_message", "--input", `{"channel": "#general", "text": "tried"}`}
	r = e.ordo("", post...)
	r.want(t, 3) // no answer on stdin: it waits
	if _, err := os.Stat(outbox); err == nil {
		t.Fatal("posted without confirmation")
	}
	r = e.ordo("r not now\n", post...)
	r.want(t, 4)
	e.ordo("", append(post, "--yes")...).want(t, 0)
	if msgs, err := os.ReadFile(outbox); err != nil || strings.Count(string(msgs), `"text":"tried"`) != 1 {
		t.Errorf("outbox: %v\n%s", err, msgs)
	}

	for _, c := range []struct {
		args []string
		code string
	}{
		{[]string{"tools", "call", "nope.nothing"}, "error 1003"},
		{[]string{"tools", "call", "text.join", "--input", "[1, 2]"}, "error 1000"},
		{[]string{"tools", "call", "text.join", "--input", "@" + filepath.Join(e.home, "missing.json")}, "error 1000"},
	} {
		r := e.ordo("", c.args...)
		r.want(t, 2)
		if !strings.Contains(r.stderr, c.code) {
			t.Errorf("ordo %v: want %s:\n%s", c.args, c.code, r.stderr)
		}
	}
}

// TestRunsDelete: runs are deleted with their logs, all named or none; a
// run a live process drives (here one waiting on a chat webhook that does
// not answer) is refused with 3004 until it ends.
func TestRunsDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hook, hit, unblock := blockingWebhook(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	if err := os.WriteFile(cfg, []byte("bundled:\n  chat:\n    webhook_url: "+hook.URL+"/hook\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars = append(e.vars, "ORDO_CONFIG="+cfg)

	a := e.ordo("", "tools", "call", "text.join", "--input", `{"items": ["a"]}`, "--json").run(t)
	b := e.ordo("", "tools", "call", "text.join", "--input", `{"items": ["b"]}`, "--json").run(t)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	post := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "tools", "call", "chat.post_message", "--yes", "--json",
		"--input", `{"channel": "#general", "text": "slow"}`)
	post.Dir, post.Env = repoRoot, e.vars
	var posted strings.Builder
	post.Stdout = &posted
	if err := post.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { post.Process.Kill(); post.Wait() })
	select {
	case <-hit:
	case <-ctx.Done():
		t.Fatal("the call never reached the webhook")
	}
	var rows []struct{ ID, Status string }
	json.Unmarshal([]byte(e.ordo("", "runs", "list", "--status", "running", "--json").stdout), &rows)
	if len(rows) != 1 {
		t.Fatalf("running runs: %+v", rows)
	}
	held := rows[0].ID

	r := e.ordo("", "runs", "delete", a.ID, held)
	r.want(t, 1)
	if !strings.Contains(r.stderr, "error 3004") || !strings.Contains(r.stderr, "cannot be deleted while it runs") {
		t.Errorf("deleting a driven run:\n%s", r.stderr)
	}
	r = e.ordo("", "runs", "delete", a.ID, "run_nope")
	r.wantErr(t, 1, "error 3001")
	e.ordo("", "runs", "show", a.ID).want(t, 0) // refused calls changed nothing

	unblock()
	if err := post.Wait(); err != nil {
		t.Fatalf("the call: %v", err)
	}
	r = e.ordo("", "runs", "delete", a.ID, b.ID, held, "--json")
	r.want(t, 0)
	var deleted struct{ Deleted []string }
	if err := json.Unmarshal([]byte(r.stdout), &deleted); err != nil || len(deleted.Deleted) != 3 {
		t.Fatalf("delete --json: %v %s", err, r.stdout)
	}
	for _, id := range []string{a.ID, b.ID, held} {
		for _, cmd := range [][]string{{"runs", "show", id}, {"runs", "events", id}} {
			if r := e.ordo("", cmd...); r.code != 1 || !strings.Contains(r.stderr, "error 3001") {
				t.Errorf("ordo %v after delete: exit %d\n%s", cmd, r.code, r.stderr)
			}
		}
	}
}

// TestConfigValidateShow: validate reads the configuration as serve does
// (token variables resolved) and exits 2 with the coded error; show prints
// the effective configuration with no secret in it.
func TestConfigValidateShow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secrets := []string{"hunter2-db", "tok-inline-0123456789abcdef", "https://hooks.example.com/services/T0/B0/XyZ", "upstream-key-42", "tok-from-env-0123456789", "url-key-43", "ODk1ZjQ2YjYtZTA0Mi00"}
	cfg := filepath.Join(e.home, "ordo.yaml")
	os.WriteFile(cfg, []byte(`store: postgres://ordo:hunter2-db@db.example.com/ordo?sslmode=disable
parallelism: 7
http:
  tokens:
    - {name: alice, token: tok-inline-0123456789abcdef, role: admin}
    - {name: bob, token_env: BOB_TOKEN, role: user}
bundled:
  chat:
    webhook_url: https://hooks.example.com/services/T0/B0/XyZ
upstreams:
  - name: mem
    command: [npx, -y, "@modelcontextprotocol/server-memory"]
    env: {MEMORY_KEY: upstream-key-42}
  - name: remote
    url: https://mcp.example.com/mcp?api_key=url-key-43&region=eu
  - name: zap
    url: https://mcp.zapier.com/api/mcp/s/ODk1ZjQ2YjYtZTA0Mi00/mcp
  - name: keyed
    url: https://mcp.example.com/s/{secret}/mcp
    url_secret_env: KEYED_SECRET
`), 0o600)
	e.vars = append(e.vars, "ORDO_CONFIG="+cfg)

	r := e.ordo("", "config", "validate")
	r.want(t, 2)
	if !strings.Contains(r.stderr, "error 1014") || !strings.Contains(r.stderr, "http.tokens[1].token_env") {
		t.Errorf("validate without BOB_TOKEN:\n%s", r.stderr)
	}
	e.vars = append(e.vars, "BOB_TOKEN=tok-from-env-0123456789")
	r = e.ordo("", "config", "validate")
	r.want(t, 0)
	if !strings.HasPrefix(r.stdout, "ok: "+cfg) {
		t.Errorf("validate: %s", r.stdout)
	}

	show := e.ordo("", "config", "show")
	show.want(t, 0)
	asJSON := e.ordo("", "config", "show", "--json")
	asJSON.want(t, 0)
	for _, r := range []result{show, asJSON} {
		for _, s := range secrets {
			if strings.Contains(r.stdout+r.stderr, s) {
				t.Errorf("config show prints the secret %q:\n%s", s, r.stdout)
			}
		}
	}
	for _, want := range []string{"store: postgres://ordo:HIDDEN@db.example.com/ordo?sslmode=disable", "parallelism: 7", "token: HIDDEN",
		"token_env: BOB_TOKEN", "webhook_url: HIDDEN", "MEMORY_KEY: HIDDEN", "url: https://mcp.example.com/mcp?api_key=HIDDEN&region=HIDDEN", "data_dir: " + e.data,
		"url: https://mcp.zapier.com/api/mcp/s/HIDDEN/mcp", "url: https://mcp.example.com/s/{secret}/mcp", "url_secret_env: KEYED_SECRET"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("config show lacks %q:\n%s", want, show.stdout)
		}
	}
	var v struct {
		Parallelism int    `json:"parallelism"`
		Store       string `json:"store"`
		LLM         struct {
			APIKeyEnv string `json:"api_key_env"`
		} `json:"llm"`
	}
	if err := json.Unmarshal([]byte(asJSON.stdout), &v); err != nil || v.Parallelism != 7 || v.LLM.APIKeyEnv != "OPENAI_API_KEY" || !strings.Contains(v.Store, "HIDDEN") {
		t.Errorf("config show --json: %v %+v", err, v)
	}
}

// TestCompletion: `ordo completion SHELL` writes a script, and the names
// a command takes are completed from the store and the catalog.
func TestCompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, sh := range []string{"bash", "zsh", "fish"} {
		r := e.ordo("", "completion", sh)
		r.want(t, 0)
		if !strings.Contains(r.stdout, "__complete") {
			t.Errorf("completion %s: no script:\n%.300s", sh, r.stdout)
		}
	}
	run := e.ordo("", "run", "--plan", firstRun, "--yes", "--json").run(t)
	r := e.ordo("", "__complete", "runs", "show", "run_")
	r.want(t, 0)
	if !strings.Contains(r.stdout, run.ID+"\tcompleted: Summarise") {
		t.Errorf("run ids:\n%s", r.stdout)
	}
	r = e.ordo("", "__complete", "runs", "delete", run.ID, "")
	if strings.Contains(r.stdout, run.ID) {
		t.Errorf("an id given is offered again:\n%s", r.stdout)
	}
	r = e.ordo("", "__complete", "runs", "fork", run.ID, "--from", "post")
	if !strings.Contains(r.stdout, "post_link\tchat.post_message") {
		t.Errorf("fork --from:\n%s", r.stdout)
	}
	r = e.ordo("", "__complete", "tools", "call", "chat.p")
	if !strings.HasPrefix(r.stdout, "chat.post_message\t") {
		t.Errorf("tool names:\n%s", r.stdout)
	}
	r = e.ordo("", "__complete", "runs", "list", "--status", "inter")
	if !strings.HasPrefix(r.stdout, "interrupted\n") {
		t.Errorf("statuses:\n%s", r.stdout)
	}
	e.ordo("", "plugins", "add", hello, "--name", "hello").want(t, 0)
	r = e.ordo("", "__complete", "plugins", "remove", "")
	if !strings.HasPrefix(r.stdout, "hello\n") {
		t.Errorf("plugin names:\n%s", r.stdout)
	}
}

// TestNewCommandsHaveExamples: the commands of issue 18 document
// themselves with examples too.
func TestNewCommandsHaveExamples(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range [][]string{{"config"}, {"config", "validate"}, {"config", "show"}, {"tools", "call"}, {"runs", "delete"}} {
		r := e.ordo("", append(c, "--help")...)
		r.want(t, 0)
		if !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("ordo %s --help has no examples", strings.Join(c, " "))
		}
	}
}
