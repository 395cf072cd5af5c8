package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

var heldMessage = regexp.MustCompile(`error 3004 .*held by "([^"]+)" for (\d+) more seconds; use --wait`)

// blockingWebhook is a chat webhook that holds every post until unblock:
// a run posting to it stays in its step, its lease held. hit hears each
// post arrive (without blocking the handler).
func blockingWebhook(t *testing.T) (hook *httptest.Server, hit chan struct{}, unblock func()) {
	hit, release := make(chan struct{}, 8), make(chan struct{})
	var once sync.Once
	unblock = func() { once.Do(func() { close(release) }) }
	hook = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hit <- struct{}{}:
		default:
		}
		select {
		case <-release:
			io.WriteString(w, "ok")
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hook.Close)
	t.Cleanup(unblock) // runs before hook.Close, which waits for the handlers
	return hook, hit, unblock
}

// Issue 13: `ordo runs resume` on a run another live process drives (an
// `ordo run` whose chat webhook hangs, so it sits in its last step holding
// and renewing the run's lease) fails with 3004 saying who holds it and for
// how many more seconds — at most lease_ttl, which the file sets to 2s.
// With --wait it waits while that process lives; once it is SIGKILLed, the
// lease runs out and the run is continued to completion.
func TestResumeHeldRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hook, hit, unblock := blockingWebhook(t)
	cfg := filepath.Join(e.home, "ordo.yaml")
	if err := os.WriteFile(cfg, []byte("lease_ttl: 2s\nbundled:\n  chat:\n    webhook_url: "+hook.URL+"/hook\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	command := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "ordo"), append([]string{"--config", cfg}, args...)...)
		cmd.Dir, cmd.Env = repoRoot, e.vars
		return cmd
	}

	first := command("run", "--plan", firstRun, "--yes")
	var firstErr bytes.Buffer
	first.Stderr = &firstErr
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Process.Kill(); first.Wait() })
	select {
	case <-hit:
	case <-time.After(time.Minute):
		t.Fatalf("the run never reached the chat webhook:\n%s", firstErr.String())
	}
	id := e.onlyRun(t, "running")

	r := e.ordo("", "--config", cfg, "runs", "resume", id)
	r.want(t, 1)
	m := heldMessage.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no held message:\n%s", r.stderr)
	}
	if n, _ := strconv.Atoi(m[2]); n < 1 || n > 2 || !strings.Contains(m[1], "/"+strconv.Itoa(first.Process.Pid)+"/") {
		t.Fatalf("held by %q for %s seconds; want the first process (pid %d) for at most lease_ttl", m[1], m[2], first.Process.Pid)
	}

	waiter := command("runs", "resume", id, "--wait", "--json")
	out, stderr := started(t, waiter)
	sc := bufio.NewScanner(stderr)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "waiting for it") && sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
	}
	first.Process.Kill() // the server dies; its lease is left to run out
	first.Wait()
	unblock()
	io.Copy(&seen, stderr) // to the end, before Wait closes the pipe
	if err := waiter.Wait(); err != nil {
		t.Fatalf("resume --wait: %v\n%s", err, seen.String())
	}
	var run contracts.Run
	if err := json.Unmarshal(out.Bytes(), &run); err != nil || run.Status != contracts.RunCompleted || run.ID != id {
		t.Fatalf("after the wait: %s %s (%v)\n%s", run.ID, run.Status, err, seen.String())
	}
}
