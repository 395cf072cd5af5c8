package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testmcp"
	"github.com/ordo-run/ordo/memory"
)

// Without a model a step that still fails waits at step_failed; approve
// retries it with an edited payload, aborts it, and retries the failed
// run (a fork from the failed step).
func TestStepFailedRetryOverMCP(t *testing.T) {
	e, ct := newChainEnvWith(t, agent.Config{})
	transports(t, e, clientOpts{}, func(t *testing.T, c *client.Client) {
		ct.setBroken(true)
		out := call(t, c, "execute", map[string]any{"plan": chainPlan()})
		in, _ := out["interrupt"].(map[string]any)
		if out["status"] != "interrupted" || in["kind"] != "step_failed" || in["action_id"] != "double" || len(in["decisions"].([]any)) != 4 {
			t.Fatalf("execute with a broken step: %v", out)
		}
		id := out["run_id"].(string)
		if code, _ := toolError(t, c, "approve", map[string]any{"run_id": id, "decision": "continue"}); code != contracts.CodeInvalidDecision {
			t.Fatalf("continue at step_failed: %d", code)
		}
		// from_action belongs to the retry of a finished run: at a step_failed
		// interrupt it is refused, not ignored, and the run waits as before.
		if code, _ := toolError(t, c, "approve", map[string]any{"run_id": id, "decision": "retry", "from_action": "fetch"}); code != contracts.CodeInvalidInput {
			t.Fatalf("retry with from_action at step_failed: %d", code)
		}
		if run, _ := e.engine.Get(context.Background(), id); run.Status != contracts.RunInterrupted {
			t.Fatalf("a refused approve changed the run: %s", run.Status)
		}
		ct.setBroken(false)
		done := call(t, c, "approve", map[string]any{"run_id": id, "decision": "retry", "payload": map[string]any{"n": 5}})
		if done["status"] != "completed" {
			t.Fatalf("retry: %v", done)
		}
		if run, _ := e.engine.Get(context.Background(), id); string(run.State["text"]) != `"the answer is 10"` {
			t.Fatalf("the retry did not use the edited payload: %s", run.State["text"])
		}

		ct.setBroken(true)
		id = call(t, c, "execute", map[string]any{"plan": chainPlan()})["run_id"].(string)
		if code, _ := toolError(t, c, "approve", map[string]any{"run_id": id, "decision": "abort"}); code != contracts.CodeToolFailed {
			t.Fatalf("abort at step_failed: %d", code)
		}
		ct.setBroken(false)
		fetched := ct.count("chain.fetch")
		// A retry of a finished run is a fork of its plan: an edited plan or
		// payload is refused, not dropped (fork_run takes a plan).
		for _, extra := range []map[string]any{{"plan": chainPlan()}, {"payload": map[string]any{"n": 5}}} {
			args := map[string]any{"run_id": id, "decision": "retry"}
			for k, v := range extra {
				args[k] = v
			}
			if code, _ := toolError(t, c, "approve", args); code != contracts.CodeInvalidInput {
				t.Fatalf("retry of a failed run with %v: %d", extra, code)
			}
		}
		fork := call(t, c, "approve", map[string]any{"run_id": id, "decision": "retry"})
		if fork["status"] != "completed" || fork["run_id"] == id || ct.count("chain.fetch") != fetched {
			t.Fatalf("retry of a failed run: %v (fetch %d -> %d)", fork, fetched, ct.count("chain.fetch"))
		}
	})
}

// pause_run stops a running run at its next step boundary at a paused
// interrupt, which approve continues; cancel_run ends a run for good.
func TestPauseAndCancelOverMCP(t *testing.T) {
	e, _ := newChainEnvWith(t, agent.Config{})
	transports(t, e, clientOpts{}, func(t *testing.T, c *client.Client) {
		open := e.closeGate()
		defer open()
		plan := map[string]any{"version": "1.0", "goal": "wait then shout", "timezone": "UTC", "actions": []any{
			map[string]any{"id": "w", "tool": "test.wait", "intent": "read", "requires": []any{}, "produces": []any{"waited"}, "inputs": map[string]any{"label": "hi"}},
			map[string]any{"id": "u", "tool": "text.upper", "intent": "transform", "requires": []any{"waited"}, "produces": []any{"upper"},
				"input_bindings": map[string]any{"text": "waited"}},
		}}
		executed := make(chan map[string]any, 1)
		go func() {
			res, err := callRaw(c, "execute", map[string]any{"plan": plan}, nil)
			if err != nil || res.IsError {
				executed <- map[string]any{"error": err, "text": testmcp.Text(res)}
				return
			}
			executed <- structured(t, res)
		}()
		id := ""
		for id == "" {
			select {
			case out := <-executed:
				t.Fatalf("execute returned before the pause: %v", out)
			case <-time.After(time.Millisecond): // the run starts on the server
			}
			runs, err := e.store.List(context.Background(), memory.Filter{Status: []contracts.RunStatus{contracts.RunRunning}})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) == 1 {
				id = runs[0].ID
			}
		}
		paused := call(t, c, "pause_run", map[string]any{"run_id": id})
		if paused["status"] != "running" || paused["note"] == "" {
			t.Fatalf("pause_run: %v", paused)
		}
		open()
		out := <-executed
		if in, _ := out["interrupt"].(map[string]any); out["status"] != "interrupted" || in["kind"] != "paused" {
			t.Fatalf("execute after the pause: %v", out)
		}
		done := call(t, c, "approve", map[string]any{"run_id": id, "decision": "continue"})
		if done["status"] != "completed" {
			t.Fatalf("continue: %v", done)
		}

		ready := call(t, c, "plan", map[string]any{"plan": upperPlan("x")})
		cancelled := call(t, c, "cancel_run", map[string]any{"run_id": ready["run_id"]})
		if cancelled["status"] != "cancelled" {
			t.Fatalf("cancel_run: %v", cancelled)
		}
		if code, _ := toolError(t, c, "cancel_run", map[string]any{"run_id": ready["run_id"]}); code != contracts.CodeRunAlreadyFinished {
			t.Fatalf("cancel_run of a cancelled run: %d", code)
		}
		if code, _ := toolError(t, c, "pause_run", map[string]any{"run_id": "run_nope"}); code != contracts.CodeRunNotFound {
			t.Fatalf("pause_run of an unknown run: %d", code)
		}
	})
}
