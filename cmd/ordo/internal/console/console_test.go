package console

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

func interrupted(in contracts.Interrupt) *contracts.Run {
	return &contracts.Run{ID: "run_1", Status: contracts.RunInterrupted, Interrupt: &in}
}

func TestDecide(t *testing.T) {
	dir := t.TempDir()
	edited := filepath.Join(dir, "plan.json")
	os.WriteFile(edited, []byte(`{"version":"1.0","goal":"g","timezone":"UTC","actions":[]}`), 0o600)
	payload := filepath.Join(dir, "payload.json")
	os.WriteFile(payload, []byte(`{"text":"hi"}`), 0o600)
	plan := contracts.Interrupt{Kind: contracts.InterruptPlanApproval}
	step := contracts.Interrupt{Kind: contracts.InterruptStepApproval, ActionID: "a1", Tool: "chat.post_message", Payload: json.RawMessage(`{"text":"x"}`)}
	cases := []struct {
		name  string
		in    contracts.Interrupt
		input string
		check func(t *testing.T, d contracts.Decision, out string)
	}{
		{"plan approve", plan, "a\n", func(t *testing.T, d contracts.Decision, _ string) {
			if d.Kind != contracts.DecisionApprove || d.By != "ada" {
				t.Errorf("%+v", d)
			}
		}},
		{"plan reject with note after a bad answer", plan, "later\nreject not now\n", func(t *testing.T, d contracts.Decision, out string) {
			if d.Kind != contracts.DecisionReject || d.Note != "not now" || !strings.Contains(out, "answer a, e FILE") {
				t.Errorf("%+v\n%s", d, out)
			}
		}},
		{"plan edit, bad file then good", plan, "e /nonexistent.json\nedit " + edited + "\n", func(t *testing.T, d contracts.Decision, out string) {
			if d.Kind != contracts.DecisionEdit || d.Plan == nil || d.Plan.Goal != "g" || !strings.Contains(out, "nonexistent") {
				t.Errorf("%+v\n%s", d, out)
			}
		}},
		{"step skip", step, "skip too noisy\n", func(t *testing.T, d contracts.Decision, out string) {
			if d.Kind != contracts.DecisionSkip || d.Note != "too noisy" || !strings.Contains(out, `{"text":"x"}`) {
				t.Errorf("%+v\n%s", d, out)
			}
		}},
		{"step edit inline, invalid JSON first", step, "e {text\ne {\"text\":\"y\"}\n", func(t *testing.T, d contracts.Decision, out string) {
			if d.Kind != contracts.DecisionEdit || string(d.Payload) != `{"text":"y"}` || !strings.Contains(out, "not valid JSON") {
				t.Errorf("%+v\n%s", d, out)
			}
		}},
		{"step edit from file", step, "e @" + payload + "\n", func(t *testing.T, d contracts.Decision, _ string) {
			if string(d.Payload) != `{"text":"hi"}` {
				t.Errorf("%+v", d)
			}
		}},
		{"clarify with a suggestion", contracts.Interrupt{Kind: contracts.InterruptClarify, Questions: []string{"which channel?", "how many?"},
			Suggestions: map[string]string{"which channel?": "general"}}, "\n3\n", func(t *testing.T, d contracts.Decision, _ string) {
			if d.Kind != contracts.DecisionAnswer || d.Answers["which channel?"] != "general" || d.Answers["how many?"] != float64(3) {
				t.Errorf("%+v", d)
			}
		}},
		{"clarify, proceed without answers", contracts.Interrupt{Kind: contracts.InterruptClarify, Questions: []string{"which channel?"}}, "/proceed\n", func(t *testing.T, d contracts.Decision, out string) {
			if d.Kind != contracts.DecisionProceedAnyway || len(d.Answers) != 0 || !strings.Contains(out, "/proceed") {
				t.Errorf("%+v\n%s", d, out)
			}
		}},
		{"input required, /proceed is a value there", contracts.Interrupt{Kind: contracts.InterruptInputRequired, Fields: []string{"$.title"}}, "/proceed\n", func(t *testing.T, d contracts.Decision, _ string) {
			if d.Kind != contracts.DecisionAnswer || d.Answers["$.title"] != "/proceed" {
				t.Errorf("%+v", d)
			}
		}},
		{"input required, reject", contracts.Interrupt{Kind: contracts.InterruptInputRequired, Fields: []string{"$.title"}}, "/reject\n", func(t *testing.T, d contracts.Decision, _ string) {
			if d.Kind != contracts.DecisionReject {
				t.Errorf("%+v", d)
			}
		}},
		{"contract changed: shown, then approved", contracts.Interrupt{Kind: contracts.InterruptContractChanged, Changes: []contracts.ContractChange{{
			Tool: "files.move", Actions: []string{"m1"}, Fields: []string{"description"}, Old: contracts.ContractPin{Hash: "0123456789abcdef"},
			New: contracts.ContractPin{Hash: "fedcba9876543210"}, Description: "Moves a file and deletes the source."}}}, "a\n", func(t *testing.T, d contracts.Decision, out string) {
			if d.Kind != contracts.DecisionApprove || !strings.Contains(out, "files.move (for m1) changed: description; contract 0123456789ab -> fedcba987654") ||
				!strings.Contains(out, "now described as: Moves a file and deletes the source.") || !strings.Contains(out, "run the plan with the new contracts?") {
				t.Errorf("%+v\n%s", d, out)
			}
		}},
		{"budget raised after a bad limit", contracts.Interrupt{Kind: contracts.InterruptBudgetExceeded,
			Budget: &contracts.BudgetStop{Budget: "run.tokens", Limit: 100, Used: 150, Before: "step"}}, "a lots\na 500\n", func(t *testing.T, d contracts.Decision, out string) {
			if d.Kind != contracts.DecisionApprove || d.Answers["limit"] != 500.0 || !strings.Contains(out, "run.tokens: 150 used of 100") || !strings.Contains(out, "not a number") {
				t.Errorf("%+v\n%s", d, out)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			d, err := NewPrompter(strings.NewReader(tc.input), &out, "ada").Decide(context.Background(), interrupted(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, d, out.String())
		})
	}
}

func TestDecideStops(t *testing.T) {
	plan := interrupted(contracts.Interrupt{Kind: contracts.InterruptPlanApproval})
	_, err := NewPrompter(strings.NewReader("maybe\n"), io.Discard, "ada").Decide(context.Background(), plan)
	if !errors.Is(err, io.EOF) {
		t.Errorf("input ended: %v", err)
	}
	r, w := io.Pipe() // never written: the person is away
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewPrompter(r, io.Discard, "ada").Decide(ctx, plan); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	_, err = NewPrompter(strings.NewReader(""), io.Discard, "ada").Decide(context.Background(), &contracts.Run{ID: "r"})
	if contracts.CodeOf(err) != contracts.CodeRunNotInterrupted {
		t.Errorf("no interrupt: %v", err)
	}
}

func TestDisplay(t *testing.T) {
	var out strings.Builder
	d := NewDisplay(&out, false)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, ev := range []agent.Event{
		{Kind: agent.EventRunStarted, RunID: "run_1", Message: "the goal", Time: t0},
		{Kind: agent.EventLLMStarted, Message: "planner", Time: t0},
		{Kind: agent.EventLLMEnded, Message: "planner", Time: t0.Add(6100 * time.Millisecond)},
		{Kind: agent.EventStepStarted, ActionID: "a1", Tool: "notes.create_page", Time: t0.Add(time.Millisecond)},
		{Kind: agent.EventStepFailed, ActionID: "a1", Tool: "notes.create_page", Message: "boom\nsecond line", Time: t0.Add(4 * time.Millisecond)},
		{Kind: agent.EventCompleted, Status: contracts.RunCompleted, Time: t0.Add(10 * time.Millisecond)},
	} {
		d.Event(ev)
	}
	for _, want := range []string{"run run_1: the goal", "◆ planner            model  6.1s", "▶ a1", "✗ a1", "3ms  boom second line", "completed after 10ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("display lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "\r") || strings.Contains(out.String(), "\x1b") {
		t.Errorf("control characters written to a non-terminal:\n%q", out.String())
	}
	out.Reset()
	d.Plan(&contracts.Run{
		Plans: []contracts.PlanRevision{{Version: 2, Source: "edit", Levels: [][]string{{"a1"}, {"a2"}},
			Plan: contracts.Plan{Actions: []contracts.Action{{ID: "a1", Tool: "t.a", Produces: []string{"k"}}, {ID: "a2", Tool: "t.b", Requires: []string{"k"}}}}}},
		Policy: map[string]contracts.PolicyDecision{"a2": {Decision: contracts.PolicyRequireConfirm, Reason: "external"}},
	})
	for _, want := range []string{"plan v2 (edit): 2 action(s) in 2 level(s)", "1. a1", "2. a2", "require_confirm (external)", "needs [k]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
}
