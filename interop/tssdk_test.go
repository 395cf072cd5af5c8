package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/internal/npmtest"
)

// report is what interop/node/sdk-client.mjs saw.
type report struct {
	Server       struct{ Name string }
	Protocol     *string
	Capabilities []string
	Tools        map[string]struct {
		OutputSchema bool `json:"output_schema"`
		Hints        int
	}
	Plan        callView
	ApprovePlan callView `json:"approve_plan"`
	ApproveStep callView `json:"approve_step"`
	Execute     callView
	Progress    []struct {
		Progress float64
		Event    string
	}
	ExecuteApprove callView `json:"execute_approve"`
	UnknownRun     callView `json:"unknown_run"`
	PlanSchema     string   `json:"plan_schema"`
}

type callView struct {
	IsError    bool
	Status     string
	RunID      string `json:"run_id"`
	Code       int
	Structured bool
	Interrupt  *struct {
		Kind     string
		ActionID string `json:"action_id"`
	}
	Steps   []string
	Mermaid bool
	Text    bool
}

// runSDKClient runs the TypeScript SDK client script with args and
// decodes its report.
func runSDKClient(t *testing.T, env []string, args ...string) report {
	t.Helper()
	dir := npmtest.Install(t, filepath.Join(repoRoot, "interop", "node"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plan := filepath.Join(repoRoot, "examples", "first-run.plan.json")
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(dir, "sdk-client.mjs"), "--plan", plan}, args...)...)
	cmd.Dir, cmd.Env = repoRoot, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sdk-client: %v\nstderr:\n%s", err, stderr.String())
	}
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("sdk-client report %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	return r
}

// TestTypeScriptSDKStdio: the official TypeScript SDK client spawns `ordo
// serve` and drives plan -> approve (plan) -> approve (step) -> completed,
// then execute with auto_approve and progress (stopping at the chat post
// policy confirms) -> approve, a tool error and a resource read. The SDK
// checks every structured result against the tool's output schema.
func TestTypeScriptSDKStdio(t *testing.T) {
	needNode(t)
	t.Parallel()
	r := runSDKClient(t, ordoEnv(t), "--stdio", filepath.Join(binDir, "ordo"), "serve")
	checkReport(t, r)
	// stdio is one ordered stream: every engine event of the run arrives,
	// in order, before the result: one policy decision per action, then
	// each action's start and success up to the chat post, which waits.
	n := len(planActions(t))
	want := []string{"run_started", "plan_ready"}
	for range n {
		want = append(want, "policy_decided")
	}
	for range n - 1 {
		want = append(want, "step_started", "step_succeeded")
	}
	want = append(want, "interrupted")
	// Ordo writes them all before the result; the SDK, though, runs
	// notification handlers in a microtask, so notifications that arrive
	// in one read with the result are dropped (the result removes the
	// progress handler first). When the steps are quick, that read can
	// hold every step's events (seen in CI: all after the policy
	// decisions), so what arrives must be the stream's beginning, in
	// order, with at least the run's start.
	var got []string
	succeeded := 0
	for _, p := range r.Progress {
		got = append(got, p.Event)
		if p.Event == "step_succeeded" {
			succeeded++
		}
	}
	g := strings.Join(got, " ")
	if len(got) == 0 || !strings.HasPrefix(strings.Join(want, " ")+" ", g+" ") ||
		r.Progress[len(r.Progress)-1].Progress != float64(succeeded) {
		t.Errorf("progress %+v, want the beginning of %v, progress counting the steps done", r.Progress, want)
	}
}

// planActions returns the ids of the plan the client runs, in order.
func planActions(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", "first-run.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var plan struct{ Actions []struct{ ID string } }
	if err := json.Unmarshal(data, &plan); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range plan.Actions {
		ids = append(ids, a.ID)
	}
	return ids
}

// TestTypeScriptSDKHTTP: the same client over streamable HTTP against
// `ordo serve --http` with a bearer token from http.tokens.
func TestTypeScriptSDKHTTP(t *testing.T) {
	needNode(t)
	t.Parallel()
	const token = "interop-token-5b1e0c7d9a"
	s := serveHTTP(t, "ada", "user", token)
	r := runSDKClient(t, append(os.Environ(), "ORDO_INTEROP_TOKEN="+token), "--url", s.url)
	checkReport(t, r)
	if r.Protocol == nil || *r.Protocol == "" {
		t.Error("no protocol version negotiated over HTTP")
	}
	// The SDK speaks 2025-11-25, whose HTTP sessions let mcp-go put a
	// request's notifications on the session's GET stream as well as on
	// the request's own, so order across the two is not fixed. Each must
	// be one of the run's, counting at most its steps.
	n := len(planActions(t))
	if max := 3 + 3*n; len(r.Progress) == 0 || len(r.Progress) > max {
		t.Errorf("progress: %d notifications, want 1..%d: %+v", len(r.Progress), max, r.Progress)
	}
	for _, p := range r.Progress {
		if p.Progress < 0 || p.Progress > float64(n) || p.Event == "" {
			t.Errorf("progress notification %+v", p)
		}
	}
	// A wrong token is refused (401, Ordo code 2001) before any MCP exchange.
	cmd := exec.Command("node", filepath.Join(npmtest.Install(t, filepath.Join(repoRoot, "interop", "node")), "sdk-client.mjs"),
		"--plan", filepath.Join(repoRoot, "examples", "first-run.plan.json"), "--url", s.url)
	cmd.Env = append(os.Environ(), "ORDO_INTEROP_TOKEN=not-the-token")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `"code":2001`) {
		t.Errorf("wrong token: err %v, output:\n%s", err, out)
	}
}

func checkReport(t *testing.T, r report) {
	t.Helper()
	if r.Server.Name != "ordo" {
		t.Errorf("server %+v", r.Server)
	}
	for _, name := range []string{"plan", "execute", "approve", "run_status", "list_runs", "search_tools"} {
		tool, ok := r.Tools[name]
		if !ok || !tool.OutputSchema || tool.Hints != 4 {
			t.Errorf("tool %s: listed %v, output schema %v, hints set %d of 4", name, ok, tool.OutputSchema, tool.Hints)
		}
	}
	if p := r.Plan; p.IsError || p.Status != "awaiting_approval" || p.RunID == "" || !p.Mermaid || p.Interrupt == nil || p.Interrupt.Kind != "plan_approval" {
		t.Errorf("plan: %+v", p)
	}
	// Every action runs; the last, the chat post, waits for a step approval.
	ids := planActions(t)
	if a := r.ApprovePlan; a.RunID != r.Plan.RunID || a.Status != "interrupted" || a.Interrupt == nil ||
		a.Interrupt.Kind != "step_approval" || a.Interrupt.ActionID != ids[len(ids)-1] || len(a.Steps) != len(ids)-1 {
		t.Errorf("approve (plan): %+v", a)
	}
	var done []string
	for _, id := range ids {
		done = append(done, id+":succeeded")
	}
	allDone := strings.Join(done, " ")
	if a := r.ApproveStep; a.RunID != r.Plan.RunID || a.Status != "completed" || strings.Join(a.Steps, " ") != allDone {
		t.Errorf("approve (step): %+v", a)
	}
	// auto_approve answered the plan approval, never the policy
	// confirmation of the chat post: a person's approve finishes the run.
	if e := r.Execute; e.IsError || e.Status != "interrupted" || e.RunID == r.Plan.RunID || e.Interrupt == nil ||
		e.Interrupt.Kind != "step_approval" || e.Interrupt.ActionID != ids[len(ids)-1] || len(e.Steps) != len(ids)-1 {
		t.Errorf("execute with auto_approve: %+v", e)
	}
	if a := r.ExecuteApprove; a.IsError || a.Status != "completed" || a.RunID != r.Execute.RunID || strings.Join(a.Steps, " ") != allDone || !a.Text {
		t.Errorf("approve after execute: %+v", a)
	}
	// Tool errors carry Ordo's code in their text and no structured content
	// (which the SDK would check against the success schema).
	if u := r.UnknownRun; !u.IsError || u.Code != 3001 || u.Structured {
		t.Errorf("execute of an unknown run: %+v", u)
	}
	if r.PlanSchema != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("ordo://schemas/action-plan $schema = %q", r.PlanSchema)
	}
}
