package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
)

// gatedModel gives e's ordo a model that answers only when let through:
// each call is announced on the first channel and waits for a value on the
// second, then gets the scripted reply. A signal can so be sent while a
// model call is surely in flight.
func (e *env) gatedModel(replies ...llmtest.Reply) (calls <-chan struct{}, release chan<- struct{}) {
	srv := llmtest.New(e.t, replies...)
	target, _ := url.Parse(strings.TrimSuffix(srv.URL, "/v1"))
	proxy := httputil.NewSingleHostReverseProxy(target)
	in, out, stop := make(chan struct{}, 8), make(chan struct{}, 8), make(chan struct{})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in <- struct{}{}
		select {
		case <-out:
			proxy.ServeHTTP(w, r)
		case <-stop: // the test ended with a call held
		}
	}))
	e.t.Cleanup(func() { close(stop); gate.Close() })
	e.vars = append(e.vars, "ORDO_LLM_BASE_URL="+gate.URL+"/v1", "ORDO_LLM_MODEL=test-model", "OPENAI_API_KEY=sk-test", "ORDO_HITL_ENABLED=false")
	return in, out
}

// exitOf is the exit code of a waited command (-1: it did not exit).
func exitOf(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// Ctrl-C while the planner thinks lets its call finish, as for a tool call
// in flight: the run stops resumable with its plan (exit 3), and resume
// finishes it. Before, the cancelled model call failed the run (exit 1,
// "the planner failed: context canceled").
func TestCtrlCWhilePlanningLeavesResumableRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	calls, release := e.gatedModel(
		llmtest.Reply{Role: "planner", Content: widgetPlan},
		llmtest.Reply{Role: "composer", Content: "Six widget rows."})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "run", "List the widget sales", "--json")
	cmd.Dir, cmd.Env = repoRoot, e.vars
	stdout, stderr := started(t, cmd)
	<-calls
	cmd.Process.Signal(os.Interrupt)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() && !strings.Contains(sc.Text(), "stopping at the next step boundary") {
	}
	release <- struct{}{}
	var seen strings.Builder
	go io.Copy(&seen, stderr)
	if code := exitOf(cmd.Wait()); code != 3 {
		t.Fatalf("exit %d, want 3 (resumable)\n%s%s", code, stdout, seen.String())
	}
	var run contracts.Run
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		t.Fatal(err)
	}
	if run.Status != contracts.RunReady || len(run.Plans) != 1 {
		t.Fatalf("status %s with %d plan(s), want ready with the planner's plan", run.Status, len(run.Plans))
	}
	release <- struct{}{} // the composer
	r := e.ordo("", "runs", "resume", run.ID, "--json")
	if got := r.wantRun(t, 0); got.Result.Answer != "Six widget rows." {
		t.Errorf("answer %q", got.Result.Answer)
	}
}

// A run whose process died while the planner worked has nothing to
// continue: resume says to plan the goal again, naming the commands, and
// does not print "continue it with: ordo runs resume" again (a loop).
func TestResumeOfRunKilledWhilePlanning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	calls, _ := e.gatedModel()
	e.vars = append(e.vars, "ORDO_LEASE_TTL=1s")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "run", "List the widget sales")
	cmd.Dir, cmd.Env = repoRoot, e.vars
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	<-calls
	cmd.Process.Kill()
	cmd.Wait()
	id := e.onlyRun(t, "pending")
	r := e.ordo("", "runs", "resume", id, "--wait")
	r.wantErr(t, 1, "error 4001")
	for _, want := range []string{"ordo run 'List the widget sales'", "ordo runs delete " + id} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "continue it with") {
		t.Errorf("resume sends the user round again:\n%s", r.stderr)
	}
}

// SIGINT and SIGTERM stop `ordo serve` over stdio cleanly (exit 0), as
// they do over HTTP. Before, it exited 1 with "error 9001 (internal):
// context canceled".
func TestServeStdioStopsCleanlyOnSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		e := newEnv(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), "serve")
		cmd.Dir, cmd.Env = repoRoot, e.vars
		stdin, _ := cmd.StdinPipe() // held open: the client is still there
		defer stdin.Close()
		_, stderr := started(t, cmd)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() && !strings.Contains(sc.Text(), "serving MCP over stdio") {
		}
		cmd.Process.Signal(sig)
		var seen strings.Builder
		io.Copy(&seen, stderr)
		if code := exitOf(cmd.Wait()); code != 0 || strings.Contains(seen.String(), "ordo: error") {
			t.Errorf("%v: exit %d\n%s", sig, code, seen.String())
		}
	}
}
