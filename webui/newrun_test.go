package webui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// TestTemplateRun: the new-run form offers the person's saved templates
// (not another user's) and starts one with its inputs, as a turn of a
// session when one is named; inputs that do not parse, and another
// user's template, start nothing.
func TestTemplateRun(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	p, err := contracts.ParsePlan([]byte(echoPlan("greet from a template", "placeholder", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.patterns.SaveTemplate(ctx, "bob", "greet", *p); err != nil {
		t.Fatal(err)
	}
	bob := s.browser(t).signIn(bobToken)
	if _, body := bob.get("/ui/runs/new"); !strings.Contains(body, `<option value="greet">greet (1 actions)</option>`) {
		t.Fatalf("bob's new-run form lacks his template:\n%s", body)
	}
	res, body := bob.post("/ui/runs", url.Values{"template": {"greet"}, "inputs": {"a1.text=hello\nno equals sign"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "inputs line 2") {
		t.Fatalf("bad inputs: %s\n%s", res.Status, body)
	}
	id := bob.start(url.Values{"template": {"greet"}, "inputs": {"a1.text=from the form"}, "session": {"templated"}})
	run := s.waitStatus(t, id, contracts.RunInterrupted)
	if run.SessionID != "templated" || run.Plans[0].Source != "template" || run.Plans[0].Plan.Actions[0].Inputs["text"] != "from the form" {
		t.Fatalf("template run: session %q, source %q, inputs %v", run.SessionID, run.Plans[0].Source, run.Plans[0].Plan.Actions[0].Inputs)
	}

	cat := s.browser(t).signIn(catToken)
	if _, body := cat.get("/ui/runs/new"); strings.Contains(body, "greet") {
		t.Fatal("cat's new-run form offers bob's template")
	}
	if res, _ := cat.post("/ui/runs", url.Values{"template": {"greet"}}); res.StatusCode < 400 {
		t.Fatalf("cat starts bob's template: %s", res.Status)
	}
	runs, err := s.store.List(ctx, memory.Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs, want bob's one: %v", len(runs), err)
	}
}
