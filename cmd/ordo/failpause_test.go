package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Without a model a step that still fails stops at step_failed and the
// person decides in the terminal: retry with an edited payload, or skip
// (the step that needs its output then stops in turn) and abort. A failed
// run is retried from the failed step with `ordo runs retry`.
func TestRunStepFailedRetrySkipAndRetryRun(t *testing.T) {
	t.Parallel()
	e, plan, root := chainEnv(t)
	if err := os.WriteFile(filepath.Join(root, "now.csv"), []byte("name\nnow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.ordo("approve\nt {\"file\":\"now.csv\"}\n", "run", "--plan", plan, "--json")
	run := r.wantRun(t, 0)
	reads := stepsOf(run, "read")
	if len(reads) != 2 || reads[0].Status != contracts.StepFailed || reads[1].Status != contracts.StepSucceeded ||
		!strings.Contains(string(reads[1].Payload), "now.csv") || !strings.Contains(r.stderr, "failed: [t]ry again") {
		t.Fatalf("retry with an edited payload: %+v\n%s", reads, r.stderr)
	}
	if d := run.Decisions[len(run.Decisions)-1]; d.Interrupt.Kind != contracts.InterruptStepFailed || d.Decision.Kind != contracts.DecisionRetry {
		t.Fatalf("decision %+v", d)
	}

	r = e.ordo("approve\ns\na\n", "run", "--plan", plan, "--json")
	src := r.wantRun(t, 1)
	if src.Status != contracts.RunFailed || src.Error.Code != contracts.CodeUnsatisfiedRequires || stepsOf(src, "read")[1].Status != contracts.StepSkipped {
		t.Fatalf("skip then abort: %s %+v %+v", src.Status, src.Error, src.Steps)
	}
	if err := os.WriteFile(filepath.Join(root, "later.csv"), []byte("name\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.ordo("", "runs", "retry", src.ID, "--from", "read", "--yes", "--json")
	fork := r.wantRun(t, 0)
	if fork.Status != contracts.RunCompleted || fork.ID == src.ID || !stepsOf(fork, "greet")[0].StartedAt.Equal(stepsOf(src, "greet")[0].StartedAt) {
		t.Fatalf("retry: %s %+v", fork.Status, fork.Steps)
	}
	e.ordo("", "runs", "retry", fork.ID).want(t, 2) // a completed run is not retried
}

// postThenNote posts to chat (a webhook the test holds), then writes a
// line: a run that sits in its first step with a step after it.
const postThenNote = `{"version":"1.0","goal":"post, then note it","timezone":"UTC","actions":[
 {"id":"post","tool":"chat.post_message","intent":"notify","requires":[],"produces":["message_ts"],"inputs":{"channel":"general","text":"hi"}},
 {"id":"note","tool":"text.template","intent":"transform","requires":["message_ts"],"produces":["text"],"inputs":{"template":"posted","values":{}}}]}`

// `ordo runs pause` against a run another process (`ordo run`) drives:
// the request goes through the run store, the driver stops at the next
// step boundary at a paused interrupt and exits 3; `ordo runs cancel`
// ends the paused run, and `ordo runs retry` forks it from where it
// stopped without posting again.
func TestPauseCancelRetryFromAnotherProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hook, hit, unblock := blockingWebhook(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	plan := filepath.Join(e.home, "post.plan.json")
	if err := os.WriteFile(cfg, []byte("bundled:\n  chat:\n    webhook_url: "+hook.URL+"/hook\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plan, []byte(postThenNote), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	driver := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "--config", cfg, "run", "--plan", plan, "--yes", "--json")
	driver.Dir, driver.Env = repoRoot, e.vars
	out, stderr := started(t, driver)
	t.Cleanup(func() { driver.Process.Kill(); driver.Wait() })
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case <-hit:
	case <-ctx.Done():
		t.Fatal("the run never reached the chat webhook")
	}
	id := e.onlyRun(t, "running")

	r := e.ordo("", "--config", cfg, "runs", "pause", id, "--wait", "0")
	r.wantErr(t, 3, "pause requested")
	var seen strings.Builder
	for line := range lines { // the driver hears the request while its step still runs
		seen.WriteString(line + "\n")
		if strings.Contains(line, "pause requested by local") {
			break
		}
	}
	unblock()
	for line := range lines {
		seen.WriteString(line + "\n")
	}
	if err := driver.Wait(); err == nil || driver.ProcessState.ExitCode() != 3 {
		t.Fatalf("driver: %v\n%s", err, seen.String())
	}
	var run contracts.Run
	if err := json.Unmarshal(out.Bytes(), &run); err != nil || run.Interrupt == nil || run.Interrupt.Kind != contracts.InterruptPaused || stepsOf(&run, "note") != nil {
		t.Fatalf("driver's run: %v %+v\n%s", err, run, seen.String())
	}

	r = e.ordo("", "--config", cfg, "runs", "cancel", id, "--json")
	r.want(t, 0)
	if got := r.run(t); got.Status != contracts.RunCancelled || got.Error.Code != contracts.CodeCancelled {
		t.Fatalf("cancel: %s %+v", got.Status, got.Error)
	}
	e.ordo("", "--config", cfg, "runs", "pause", id).want(t, 1) // finished: 3006

	r = e.ordo("", "--config", cfg, "runs", "retry", id, "--yes", "--json")
	r.want(t, 0)
	if fork := r.run(t); fork.Status != contracts.RunCompleted || len(stepsOf(fork, "post")) != 1 || !stepsOf(fork, "post")[0].StartedAt.Equal(stepsOf(&run, "post")[0].StartedAt) {
		t.Fatalf("retry of the cancelled run: %s %+v", fork.Status, fork.Steps)
	}
}
