package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/agent/llm/openai"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/testwait"
)

// holdPlan is a test.hold at gate, then an echo.
func holdPlan(goal, gate string) string {
	data, _ := json.Marshal(map[string]any{"version": "1.0", "goal": goal, "timezone": "UTC", "actions": []map[string]any{
		{"id": "a1", "tool": "test.hold", "intent": "read", "requires": []string{}, "produces": []string{}, "inputs": map[string]any{"gate": gate}},
		{"id": "a2", "tool": "test.echo", "intent": "transform", "requires": []string{}, "produces": []string{}, "inputs": map[string]any{"text": "after " + gate}, "depends_on": []string{"a1"}},
	}})
	return string(data)
}

// startHeld starts a holdPlan, approves it and waits until it runs (its
// first step holds until the test opens gate).
func (b *browser) startHeld(goal, gate string) string {
	b.t.Helper()
	id := b.startPlan(holdPlan(goal, gate))
	b.approve(id)
	testwait.For(b.t, 20*time.Second, func() error {
		run, err := b.s.engine.Get(context.Background(), id)
		if err != nil || run.Status != contracts.RunRunning {
			return fmt.Errorf("run %s is not running yet", id)
		}
		return nil
	})
	return id
}

// TestPauseContinueCancelRetry: a moving run's page offers Pause and
// Cancel run; Pause stops it at the next step boundary at a paused
// interrupt, whose page offers Continue, Edit and Abort, and Continue
// finishes it. Cancel ends another for good, and its page then offers
// Retry, which starts the person's new run from the step that stopped.
// Another user can do neither (404), and a bad request is refused.
func TestPauseContinueCancelRetry(t *testing.T) {
	s := newStack(t)
	b := s.browser(t).signIn(bobToken)
	id := b.startHeld("pause me", "g1")
	_, page := b.get("/ui/runs/" + id)
	for _, want := range []string{">Pause</button>", ">Cancel run</button>"} {
		if !strings.Contains(page, want) {
			t.Errorf("a running run's page lacks %s", want)
		}
	}
	cat := s.browser(t).signIn(catToken)
	if res, _ := cat.post("/ui/runs/"+id+"/steer", url.Values{"do": {"cancel"}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("cat cancels bob's run: %s", res.Status)
	}
	if res, _ := b.post("/ui/runs/"+id+"/steer", url.Values{"do": {"explode"}}); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("do=explode: %s", res.Status)
	}
	if res, body := b.post("/ui/runs/"+id+"/steer", url.Values{"do": {"pause"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("pause: %s\n%s", res.Status, body)
	}
	s.gates.open("g1")
	run := s.waitStatus(t, id, contracts.RunInterrupted)
	if run.Interrupt.Kind != contracts.InterruptPaused {
		t.Fatalf("interrupt %s, want paused", run.Interrupt.Kind)
	}
	_, page = b.get("/ui/runs/" + id)
	for _, want := range []string{">Continue</button>", ">Edit</button>", ">Abort</button>"} {
		if !strings.Contains(page, want) {
			t.Errorf("a paused run's page lacks %s", want)
		}
	}
	if strings.Contains(page, ">Pause</button>") {
		t.Error("a paused run's page offers Pause")
	}
	b.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"continue"}})
	s.waitStatus(t, id, contracts.RunCompleted)

	id = b.startHeld("cancel me", "g2")
	if res, body := b.post("/ui/runs/"+id+"/steer", url.Values{"do": {"cancel"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %s\n%s", res.Status, body)
	}
	s.gates.open("g2")
	s.waitStatus(t, id, contracts.RunCancelled)
	_, page = b.get("/ui/runs/" + id)
	if !strings.Contains(page, ">Retry</button>") || strings.Contains(page, ">Cancel run</button>") {
		t.Fatalf("a cancelled run's page:\n%s", page)
	}
	if res, _ := cat.post("/ui/runs/"+id+"/retry", url.Values{}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("cat retries bob's run: %s", res.Status)
	}
	res, body := b.post("/ui/runs/"+id+"/retry", url.Values{})
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/runs/run_") || loc == "/ui/runs/"+id {
		t.Fatalf("retry: %s %s\n%s", res.Status, loc, body)
	}
	retried, err := s.engine.Get(context.Background(), strings.TrimPrefix(loc, "/ui/runs/"))
	if err != nil || retried.UserID != "bob" || retried.Goal != "cancel me" {
		t.Fatalf("retried run %+v: %v", retried, err)
	}
}

// TestRunsListFilterAndPaging: the list pages 50 runs at a time, newest
// first, every run once; the status filter and an admin's user filter
// narrow it; a bad filter is refused.
func TestRunsListFilterAndPaging(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	p, err := contracts.ParsePlan([]byte(echoPlan("paged", "x", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for range 53 {
		run, err := s.engine.Run(ctx, agent.Request{Goal: "paged", Plan: p, UserID: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		last = run.ID
	}
	if _, err := s.engine.Resume(ctx, last, contracts.Decision{Kind: contracts.DecisionApprove, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	s.waitStatus(t, last, contracts.RunCompleted)

	rows := func(body string) int { return strings.Count(body, `<td><code>run_`) }
	b := s.browser(t).signIn(bobToken)
	_, first := b.get("/ui/runs")
	if rows(first) != 50 || !strings.Contains(first, `rel="next"`) {
		t.Fatalf("first page: %d rows", rows(first))
	}
	next := first[strings.Index(first, `rel="next" href="`)+len(`rel="next" href="`):]
	next = strings.ReplaceAll(next[:strings.Index(next, `"`)], "&amp;", "&")
	if !strings.Contains(next, "before_id=run_") { // runs updated at one instant are paged, not skipped
		t.Fatalf("next page link %s names no position after the last run", next)
	}
	_, second := b.get(next)
	if rows(second) != 3 || strings.Contains(second, `rel="next"`) {
		t.Fatalf("second page (%s): %d rows", next, rows(second))
	}
	seen := map[string]bool{}
	for _, page := range []string{first, second} {
		for _, part := range strings.Split(page, "<td><code>")[1:] {
			seen[part[:strings.Index(part, "<")]] = true
		}
	}
	if len(seen) != 53 {
		t.Fatalf("%d distinct runs over both pages, want 53", len(seen))
	}
	if _, body := b.get("/ui/runs?status=completed"); rows(body) != 1 || !strings.Contains(body, last) {
		t.Fatalf("status=completed: %d rows", rows(body))
	}
	for _, q := range []string{"status=bogus", "before=yesterday"} {
		if res, _ := b.get("/ui/runs?" + q); res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: %s", q, res.Status)
		}
	}
	if _, body := b.get("/ui/runs?user=cat"); rows(body) != 50 {
		t.Errorf("a user's user filter is not theirs to set: %d rows", rows(body))
	}
	ada := s.browser(t).signIn(adaToken)
	if _, body := ada.get("/ui/runs?user=bob&status=completed"); rows(body) != 1 || !strings.Contains(body, "<td>bob</td>") {
		t.Errorf("admin, user=bob status=completed: %d rows", rows(body))
	}
	if _, body := ada.get("/ui/runs?user=cat"); rows(body) != 0 {
		t.Errorf("admin, user=cat: %d rows", rows(body))
	}
}

// TestPlanVersions: a plan edited at approval gives the run a second plan
// version; the page shows both side by side with their actions.
func TestPlanVersions(t *testing.T) {
	s := newStack(t)
	b := s.browser(t).signIn(bobToken)
	id := b.startPlan(echoPlan("versions", "x", 1))
	s.waitStatus(t, id, contracts.RunInterrupted)
	b.get("/ui/runs/" + id)
	if res, body := b.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"edit"}, "plan": {`{"version":"1.0","goal":"g","actions":[{"id":"a1"}]}`}}); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "field") {
		t.Fatalf("an invalid edited plan: %s\n%s", res.Status, body)
	}
	if res, body := b.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"edit"}, "plan": {echoPlan("versions", "y", 3)}, "note": {"three"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("edit: %s\n%s", res.Status, body)
	}
	run := s.waitStatus(t, id, contracts.RunCompleted)
	if len(run.Plans) != 2 {
		t.Fatalf("%d plan versions", len(run.Plans))
	}
	_, page := b.get("/ui/runs/" + id)
	i := strings.Index(page, `aria-label="Plan versions"`)
	if i < 0 {
		t.Fatalf("no plan versions:\n%s", page)
	}
	versions := page[i:]
	versions = versions[:strings.Index(versions, "</section>")]
	if strings.Count(versions, `<div class="version">`) != 2 || !strings.Contains(versions, "<h3>v1") || !strings.Contains(versions, "<h3>v2") ||
		strings.Count(versions, "<li>") != 4 {
		t.Fatalf("plan versions:\n%s", versions)
	}
}

// TestSecretsRedacted: a step's payload is shown as the run record holds
// it, a contract's secret fields redacted: the password never reaches the
// page.
func TestSecretsRedacted(t *testing.T) {
	s := newStack(t)
	b := s.browser(t).signIn(bobToken)
	plan, _ := json.Marshal(map[string]any{"version": "1.0", "goal": "log in", "timezone": "UTC", "actions": []map[string]any{
		{"id": "a1", "tool": "test.login", "intent": "read", "requires": []string{}, "produces": []string{}, "inputs": map[string]any{"user": "bob", "password": "hunter2-secret"}},
	}})
	id := b.startPlan(string(plan))
	b.approve(id)
	s.waitStatus(t, id, contracts.RunCompleted)
	_, page := b.get("/ui/runs/" + id)
	if strings.Contains(page, "hunter2") || !strings.Contains(page, contracts.Redacted) || !strings.Contains(page, "&#34;user&#34;:&#34;bob&#34;") {
		t.Fatalf("run page:\n%s", page)
	}
}

// TestReplanFromTheConsole: a step that still fails waits at step_failed
// (on_failure ask) and its page offers Re-plan; pressing it has the model
// re-plan the rest, and the run completes on the new plan.
func TestReplanFromTheConsole(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply{Role: "replanner", Content: `{"version":"1.0","goal":"echo instead","timezone":"UTC","actions":[
		 {"id":"b1","tool":"test.echo","intent":"transform","requires":[],"produces":[],"inputs":{"text":"re-planned"}}]}`},
		llmtest.Reply{Role: "composer", Content: "Echoed instead."})
	model, err := openai.New(openai.Config{BaseURL: srv.URL, Model: "test", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cfg := agent.DefaultConfig()
	cfg.OnFailure = contracts.OnFailureAsk
	s := newStackWith(t, cfg, model)
	b := s.browser(t).signIn(bobToken)
	id := b.startPlan(`{"version":"1.0","goal":"fail, then re-plan","timezone":"UTC","actions":[
	 {"id":"a1","tool":"test.fail","intent":"read","requires":[],"produces":[],"inputs":{}}]}`)
	b.approve(id)
	waitAt := func(kind contracts.InterruptKind) {
		testwait.For(t, 20*time.Second, func() error {
			run, err := s.engine.Get(context.Background(), id)
			if err != nil || run.Interrupt == nil || run.Interrupt.Kind != kind {
				return fmt.Errorf("run %s does not wait at %s yet (%v)", id, kind, err)
			}
			return nil
		})
	}
	waitAt(contracts.InterruptStepFailed)
	if _, page := b.get("/ui/runs/" + id); !strings.Contains(page, ">Re-plan</button>") {
		t.Fatalf("a failed step's page lacks Re-plan:\n%s", page)
	}
	if res, body := b.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"replan"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("replan: %s\n%s", res.Status, body)
	}
	waitAt(contracts.InterruptPlanApproval) // the re-planned plan waits for approval, as the first did
	b.approve(id)
	run := s.waitStatus(t, id, contracts.RunCompleted)
	if run.ReplanCount != 1 || len(run.Plans) != 2 || run.Result == nil || run.Result.Answer != "Echoed instead." || srv.Count("replanner") != 1 {
		t.Fatalf("replans=%d plans=%d result=%+v", run.ReplanCount, len(run.Plans), run.Result)
	}
}

// TestStaleDecisionRefused: a decision form answers the interrupt it was
// shown with. Two people approve step by step (or one in two tabs, or a
// page that kept an old form while a note was typed); one approves a1,
// the run moves on to wait for a2, and the other's Approve, sent from the
// page that showed a1, would approve a2 unseen. It is refused (409, code
// 5003) and the run still waits for a2; the form on a fresh page works.
func TestStaleDecisionRefused(t *testing.T) {
	cfg := agent.DefaultConfig()
	cfg.HITL.StepApproval = true
	s := newStackWith(t, cfg, nil)
	bob := s.browser(t).signIn(bobToken)
	ada := s.browser(t).signIn(adaToken)
	id := bob.startPlan(echoPlan("two steps", "x", 2))
	bob.approve(id)
	waitsFor := func(action string) {
		t.Helper()
		testwait.For(t, 20*time.Second, func() error {
			run, err := s.engine.Get(context.Background(), id)
			if err != nil || run.Interrupt == nil || run.Interrupt.Kind != contracts.InterruptStepApproval || run.Interrupt.ActionID != action {
				return fmt.Errorf("run %s: %v, want a step approval of %s", id, run, action)
			}
			return nil
		})
	}
	waitsFor("a1")
	bob.get("/ui/runs/" + id) // bob's page shows a1's approval
	ada.get("/ui/runs/" + id)
	if res, body := ada.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"approve"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("ada approves a1: %s\n%s", res.Status, body)
	}
	waitsFor("a2")
	if res, body := bob.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"approve"}}); res.StatusCode != http.StatusConflict || !strings.Contains(body, "5003") {
		t.Fatalf("approve from a page showing a1, the run waiting for a2: %s\n%s", res.Status, body)
	}
	if res, body := bob.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"approve"}, "seq": {""}}); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "1000") {
		t.Fatalf("approve naming no interrupt: %s\n%s", res.Status, body)
	}
	waitsFor("a2")
	bob.get("/ui/runs/" + id)
	if res, body := bob.post("/ui/runs/"+id+"/decide", url.Values{"decision": {"approve"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve a2 from a fresh page: %s\n%s", res.Status, body)
	}
	s.waitStatus(t, id, contracts.RunCompleted)
}
