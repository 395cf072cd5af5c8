package agent

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// countingStore counts the store writes the engine makes.
type countingStore struct {
	*memory.MemStore
	mu sync.Mutex
	n  map[string]int
}

func (c *countingStore) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[op]++
}

// take returns the counts so far and starts again.
func (c *countingStore) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

func (c *countingStore) Save(ctx context.Context, run *contracts.Run) error {
	c.add("save")
	return c.MemStore.Save(ctx, run)
}

func (c *countingStore) SaveLeased(ctx context.Context, run *contracts.Run, owner string, ttl time.Duration) error {
	c.add("save_leased")
	return c.MemStore.SaveLeased(ctx, run, owner, ttl)
}

func (c *countingStore) Acquire(ctx context.Context, runID, owner string, ttl time.Duration) error {
	c.add("acquire")
	return c.MemStore.Acquire(ctx, runID, owner, ttl)
}

func (c *countingStore) Release(ctx context.Context, runID, owner string) error {
	c.add("release")
	return c.MemStore.Release(ctx, runID, owner)
}

// A run writes only what must be durable: a one-action run creates
// itself with its lease before its call and finishes with the step in
// the same write (no release: a finished run holds no lease); a run
// stopping at an approval writes the question alone and is never leased;
// its resume takes the lease, makes the decision durable before the call
// and finishes in one more write. Every call sees its run's checkpoint,
// with the decision that allowed it, already stored.
func TestRunWritesOnlyWhatMustBeDurable(t *testing.T) {
	ctx := context.Background()
	st := &countingStore{MemStore: newStore(), n: map[string]int{}}
	var seen []*contracts.Run
	check := func(_ context.Context, c sdk.Call) (any, error) {
		sums, _ := st.List(ctx, memory.Filter{Status: []contracts.RunStatus{contracts.RunRunning}})
		for _, s := range sums {
			run, _ := st.Load(ctx, s.ID)
			seen = append(seen, run)
		}
		return map[string]any{"deleted": true, "upper": "X"}, nil
	}
	del := deleteTool()
	del.Handler = check
	up := tool("text.upper", contracts.RiskRead, `{"type":"object"}`, `{"type":"object","required":["upper"],"properties":{"upper":{"type":"string"}}}`,
		map[string]string{"upper": "$.upper"}, check)
	tt := newTools(t, del, up)
	e := New(Config{}, Deps{Tools: tt, Store: st})

	run, err := e.Run(ctx, Request{Plan: mustPlan(t, `{"version":"1.0","goal":"u","timezone":"UTC","actions":[
	 {"id":"u1","tool":"text.upper","intent":"transform","requires":[],"produces":["upper"]}]}`)})
	wantStatus(t, run, err, contracts.RunCompleted)
	if got, want := st.take(), map[string]int{"save_leased": 1, "save": 1}; !maps.Equal(got, want) || run.Seq != 2 {
		t.Fatalf("a one-action run wrote %v up to seq %d, want %v", got, run.Seq, want)
	}
	if len(seen) != 1 || seen[0].Status != contracts.RunRunning || len(seen[0].Plans) != 1 {
		t.Fatalf("the call saw %+v", seen)
	}

	seen = nil
	run, err = e.Run(ctx, Request{Plan: mustPlan(t, `{"version":"1.0","goal":"d","timezone":"UTC","actions":[
	 {"id":"d1","tool":"notes.delete_page","intent":"write","requires":[],"produces":["deleted"],"inputs":{"page":"p"}}]}`)})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if got, want := st.take(), map[string]int{"save": 1}; !maps.Equal(got, want) {
		t.Fatalf("a run stopping at its approval wrote %v, want %v", got, want)
	}
	run, err = New(Config{}, Deps{Tools: tt, Store: st}).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "ann"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if got, want := st.take(), map[string]int{"acquire": 1, "save": 2}; !maps.Equal(got, want) {
		t.Fatalf("its resume wrote %v, want %v", got, want)
	}
	if len(seen) != 1 || len(seen[0].Decisions) != 1 || seen[0].Decisions[0].Decision.By != "ann" {
		t.Fatalf("the call saw %+v", seen)
	}
	if err := st.Acquire(ctx, run.ID, "someone", time.Minute); err != nil {
		t.Fatalf("the finished run kept its lease: %v", err)
	}
}
