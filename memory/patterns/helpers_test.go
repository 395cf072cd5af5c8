package patterns_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/patterns"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// step is one attempt in a test run: which tool, for what intent, whether
// it worked and how long it took.
type step struct {
	tool, intent string
	ok           bool
	ms           int
}

// finishedRun builds a run the way the engine records one: a plan with one
// action per distinct (tool, intent), a step record per attempt.
func finishedRun(user, goal string, status contracts.RunStatus, steps ...step) *contracts.Run {
	plan := contracts.Plan{Version: contracts.PlanVersion, Goal: goal, Timezone: "UTC"}
	ids := map[[2]string]string{}
	run := &contracts.Run{ID: fmt.Sprintf("run-%d", time.Now().UnixNano()), UserID: user, Goal: goal, Status: status,
		CreatedAt: t0, UpdatedAt: t0.Add(time.Minute)}
	for i, s := range steps {
		k := [2]string{s.tool, s.intent}
		id, ok := ids[k]
		if !ok {
			id = fmt.Sprintf("a%d", len(ids)+1)
			ids[k] = id
			plan.Actions = append(plan.Actions, contracts.Action{ID: id, Tool: s.tool, Intent: s.intent, Requires: []string{}, Produces: []string{}})
		}
		st := contracts.StepSucceeded
		if !s.ok {
			st = contracts.StepFailed
		}
		start := t0.Add(time.Duration(i) * time.Second)
		run.Steps = append(run.Steps, contracts.StepRecord{ActionID: id, Tool: s.tool, PlanVersion: 1, Attempt: 1, Status: st,
			StartedAt: start, EndedAt: start.Add(time.Duration(s.ms) * time.Millisecond)})
	}
	run.Plans = []contracts.PlanRevision{{Version: 1, Source: "planner", Plan: plan, CreatedAt: t0}}
	return run
}

// decide appends a decision record to run.
func decide(run *contracts.Run, in contracts.Interrupt, d contracts.Decision) *contracts.Run {
	run.Decisions = append(run.Decisions, contracts.DecisionRecord{Interrupt: in, Decision: d, At: t0})
	return run
}

func open(t *testing.T, dir string, o patterns.Options) *patterns.Memory {
	t.Helper()
	m, err := patterns.Open(dir, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func collect(t *testing.T, m *patterns.Memory, runs ...*contracts.Run) {
	t.Helper()
	for _, r := range runs {
		if err := m.Collect(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
}

func list(t *testing.T, m *patterns.Memory, user string, ns patterns.Namespace) []patterns.Record {
	t.Helper()
	rs, err := m.List(t.Context(), user, ns)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
