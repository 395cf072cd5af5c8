package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/agent/llm/llmtest"
	"github.com/ordo-run/ordo/contracts"
)

// TestRunSessionAndSessionsCommands: two `ordo run --session trip` calls
// are turns of one conversation (the second planner call sees the first
// turn; a goal that needs no tool is answered by the composer), `--context`
// reaches the models, and `ordo sessions list` / `show` print them. A bad
// session name is refused with its code; a saved template runs as a
// turn of the session too.
func TestRunSessionAndSessionsCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.withModel(
		llmtest.Reply{Role: "planner", Content: widgetPlan},
		llmtest.Reply{Role: "composer", Content: "Widgets sold in six rows of Q1."},
		llmtest.Reply{Role: "planner", Content: `{"version":"1.0","goal":"how many rows?","timezone":"UTC","actions":[]}`},
		llmtest.Reply{Role: "composer", Content: "Six rows, as I said."},
		llmtest.Reply{Role: "composer", Content: "The widget sales again."})

	first := e.ordo("", "run", "--session", "trip", "List the widget sales", "--json")
	first.want(t, 0)
	second := e.ordo("", "run", "--session", "trip", "--context", "the user reads on a phone", "How many rows were there?")
	second.want(t, 0)
	if strings.TrimSpace(second.stdout) != "Six rows, as I said." {
		t.Fatalf("second turn's answer:\n%s", second.stdout)
	}
	var planners []map[string]any
	for _, r := range srv.Requests() {
		if r.Role == "planner" {
			var in map[string]any
			if err := json.Unmarshal([]byte(r.Messages[len(r.Messages)-1].Content), &in); err != nil {
				t.Fatal(err)
			}
			planners = append(planners, in)
		}
	}
	turns, _ := planners[1]["conversation"].([]any)
	if len(planners) != 2 || len(turns) != 1 || planners[1]["context"] != "the user reads on a phone" {
		t.Fatalf("second planner input: %v", planners[1])
	}
	if t0 := turns[0].(map[string]any); t0["goal"] != "List the widget sales" || t0["answer"] != "Widgets sold in six rows of Q1." {
		t.Fatalf("second planner saw turn %v", t0)
	}

	list := e.ordo("", "sessions", "list")
	list.want(t, 0)
	if !strings.Contains(list.stdout, "SESSION") || !strings.Contains(list.stdout, "trip") || !strings.Contains(list.stdout, "How many rows were there?") {
		t.Fatalf("sessions list:\n%s", list.stdout)
	}
	show := e.ordo("", "sessions", "show", "trip")
	show.want(t, 0)
	if !strings.Contains(show.stdout, "session trip: 2 turns") || !strings.Contains(show.stdout, "> List the widget sales\nWidgets sold in six rows of Q1.") ||
		!strings.Contains(show.stdout, first.run(t).ID) {
		t.Fatalf("sessions show:\n%s", show.stdout)
	}
	js := e.ordo("", "sessions", "show", "trip", "--json")
	js.want(t, 0)
	var s struct {
		Turns []contracts.Turn `json:"turns"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &s); err != nil || len(s.Turns) != 2 || s.Turns[1].Answer != "Six rows, as I said." {
		t.Fatalf("sessions show --json: %v\n%s", err, js.stdout)
	}

	missing := e.ordo("", "sessions", "show", "nope")
	if missing.code == 0 || !strings.Contains(missing.stderr, "3001") {
		t.Fatalf("unknown session: exit %d\n%s", missing.code, missing.stderr)
	}
	bad := e.ordo("", "run", "--session", " padded", "--plan", firstRun, "--yes")
	if bad.code != 2 || !strings.Contains(bad.stderr, "1000") {
		t.Fatalf("bad session name: exit %d\n%s", bad.code, bad.stderr)
	}

	// A saved template runs as a turn too: no planner call, the composer
	// sees the conversation so far.
	e.ordo("", "runs", "save-template", first.run(t).ID, "widgets").want(t, 0)
	third := e.ordo("", "run", "--session", "trip", "--template", "widgets", "--yes")
	third.want(t, 0)
	var composers []map[string]any
	for _, r := range srv.Requests() {
		if r.Role == "composer" {
			var in map[string]any
			if err := json.Unmarshal([]byte(r.Messages[len(r.Messages)-1].Content), &in); err != nil {
				t.Fatal(err)
			}
			composers = append(composers, in)
		}
	}
	if turns, _ := composers[len(composers)-1]["conversation"].([]any); len(composers) != 3 || len(turns) != 2 {
		t.Fatalf("the template turn's composer input: %v", composers[len(composers)-1])
	}
	js = e.ordo("", "sessions", "show", "trip", "--json")
	js.want(t, 0)
	if err := json.Unmarshal([]byte(js.stdout), &s); err != nil || len(s.Turns) != 3 || s.Turns[2].Answer != "The widget sales again." {
		t.Fatalf("sessions show --json after the template turn: %v\n%s", err, js.stdout)
	}
}
