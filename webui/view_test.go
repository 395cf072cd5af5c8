package webui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// TestInterruptForms: each interrupt kind gets one form per decision
// agent.Decisions accepts, with a plain button name, and the fields the
// decision carries (questions with their remembered answers, missing
// input paths, the plan or payload to edit, a budget's limit).
func TestInterruptForms(t *testing.T) {
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	plan := contracts.Plan{Version: "1.0", Goal: "g", Actions: []contracts.Action{{ID: "a1", Tool: "test.echo", Intent: "transform"}}}
	for _, in := range []contracts.Interrupt{
		{Kind: contracts.InterruptPlanApproval, Message: "approve the plan"},
		{Kind: contracts.InterruptStepApproval, ActionID: "a1", Tool: "test.echo", Payload: json.RawMessage(`{"text":"<b>hi</b>"}`)},
		{Kind: contracts.InterruptClarify, Questions: []string{"Which file?"}, Suggestions: map[string]string{"Which file?": "sales.csv"}},
		{Kind: contracts.InterruptInputRequired, ActionID: "a1", Fields: []string{"$.text", "$.password"}, Secret: []string{"$.password"},
			Suggestions: map[string]string{"$.text": "hello", "$.password": "not-offered"}},
		{Kind: contracts.InterruptBudgetExceeded, Budget: &contracts.BudgetStop{}},
		{Kind: contracts.InterruptStepFailed, ActionID: "a1", Payload: json.RawMessage(`{"text":"x"}`),
			Error: contracts.Errorf(contracts.CodeToolFailed, "the <tool> broke")},
		{Kind: contracts.InterruptPaused, Message: "paused by bob"},
		{Kind: contracts.InterruptVerifyQuestion, Message: "is this right?"},
		{Kind: contracts.InterruptContractChanged, Message: "the contract changed", Changes: []contracts.ContractChange{{
			Tool: "test.echo", Actions: []string{"a1"}, Fields: []string{"description", "input_schema"},
			Old: contracts.ContractPin{Hash: "0123456789abcdef"}, New: contracts.ContractPin{Hash: "fedcba9876543210"}, Description: "Echoes, and <deletes> the source."}}},
	} {
		run := &contracts.Run{ID: "run_x", Goal: "g", Status: contracts.RunInterrupted, Interrupt: &in,
			Plans: []contracts.PlanRevision{{Version: 1, Plan: plan}}}
		var b bytes.Buffer
		if err := pages["run"].ExecuteTemplate(&b, "live", view{CSRF: "tok", Data: newRunView(run)}); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		decisions := agent.Decisions(in.Kind)
		if len(decisions) == 0 || strings.Count(page, `name="decision"`) != len(decisions) {
			t.Errorf("%s: %d forms, want %v", in.Kind, strings.Count(page, `name="decision"`), decisions)
		}
		for _, d := range decisions {
			if !strings.Contains(page, ">"+label(d)+"</button>") {
				t.Errorf("%s: no %q button", in.Kind, label(d))
			}
		}
		want := map[contracts.InterruptKind]string{
			contracts.InterruptPlanApproval:   `name="plan"`,
			contracts.InterruptStepApproval:   `&lt;b&gt;hi&lt;/b&gt;`,
			contracts.InterruptClarify:        `name="answer:Which file?" value="sales.csv"`,
			contracts.InterruptInputRequired:  `name="answer:$.text" value="hello"><label for="ans-1">$.password</label><input id="ans-1" name="answer:$.password" type="password" autocomplete="off">`,
			contracts.InterruptBudgetExceeded: `name="answer:limit"`,
			contracts.InterruptStepFailed:     `the &lt;tool&gt; broke`,
			contracts.InterruptPaused:         `name="plan"`,
			contracts.InterruptVerifyQuestion: `name="answer:answer"`,
			contracts.InterruptContractChanged: `<td><code>test.echo</code></td><td>a1</td><td>description, input_schema<br>now described as: Echoes, and &lt;deletes&gt; the source.</td>` +
				`<td><code>0123456789ab</code> → <code>fedcba987654</code></td>`,
		}[in.Kind]
		if !strings.Contains(page, want) {
			t.Errorf("%s: lacks %s:\n%s", in.Kind, want, page)
		}
	}
}

// TestGraphLayout: levels become columns, requirements become edges, and
// each node carries its action's status.
func TestGraphLayout(t *testing.T) {
	p := contracts.Plan{Actions: []contracts.Action{
		{ID: "a", Tool: "t.x", Produces: []string{"k"}},
		{ID: "b", Tool: "t.y", Requires: []string{"k"}},
		{ID: "c", Tool: "t.z", DependsOn: []string{"a"}},
	}}
	run := &contracts.Run{Steps: []contracts.StepRecord{{ActionID: "a", PlanVersion: 1, Status: contracts.StepSucceeded}},
		Plans: []contracts.PlanRevision{{Version: 1, Plan: p}}}
	g := layout(&run.Plans[0], run)
	if len(g.Nodes) != 3 || len(g.Edges) != 2 {
		t.Fatalf("%d nodes, %d edges", len(g.Nodes), len(g.Edges))
	}
	st := map[string]nodeView{}
	for _, n := range g.Nodes {
		st[n.ID] = n
	}
	if st["a"].Status != "succeeded" || st["b"].Status != "pending" || st["b"].X <= st["a"].X || st["b"].X != st["c"].X {
		t.Fatalf("nodes %+v", st)
	}
}

// TestModelCalls: the run page lists model calls by role with each
// role's tokens and cost, and the run's total.
func TestModelCalls(t *testing.T) {
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	run := &contracts.Run{ID: "run_x", Goal: "g", Status: contracts.RunCompleted,
		LLMCalls: map[string]int{"planner": 1, "composer": 2},
		Usage: contracts.RunUsage{
			ByRole: map[string]contracts.TokenUsage{"planner": {InputTokens: 1200, OutputTokens: 300, CostUSD: 0.0042}, "composer": {InputTokens: 800, OutputTokens: 90, CostUSD: 0.001}},
			Total:  contracts.TokenUsage{InputTokens: 2000, OutputTokens: 390, CostUSD: 0.0052}}}
	var b bytes.Buffer
	if err := pages["run"].ExecuteTemplate(&b, "live", view{Data: newRunView(run)}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<tr><td>composer</td><td>2</td><td>800</td><td>90</td><td>$0.0010</td></tr>",
		"<tr><td>planner</td><td>1</td><td>1200</td><td>300</td><td>$0.0042</td></tr>",
		"<td>all</td><td></td><td>2000</td><td>390</td><td>$0.0052</td>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("model calls lack %s:\n%s", want, page)
		}
	}
}
