package patterns_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/syncbuf"
	"github.com/ordo-run/ordo/internal/testerr"
	"github.com/ordo-run/ordo/memory/patterns"
	"github.com/ordo-run/ordo/recommender/embed"
)

// gatedEmbedder is the real hashed embedder behind a gate: embedding waits
// until the test opens it, so a test can hold collection mid-way. fail
// makes every embedding of that text fail.
type gatedEmbedder struct {
	*embed.Hashed
	gate chan struct{}
	fail string
}

func (g *gatedEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for _, t := range texts {
		if t == g.fail {
			return nil, errors.New("embedding service down")
		}
	}
	return g.Hashed.EmbedDocuments(ctx, texts)
}

func TestCollectorDoesNotBlockAndDrainsOnClose(t *testing.T) {
	emb := &gatedEmbedder{Hashed: embed.NewHashed(embed.HashedOptions{}), gate: make(chan struct{}), fail: "broken goal"}
	m, err := patterns.Open("", emb, patterns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	c := patterns.NewCollector(m, patterns.CollectorOptions{Queue: 3, Logger: slog.New(slog.NewTextHandler(logs, nil))})

	run := func(goal string) *contracts.Run {
		return finishedRun("ann", goal, contracts.RunCompleted, step{"chat.post", "post the report", true, 1})
	}
	// The embedder is closed, so the collector is stuck on the first run;
	// Submit must still return at once, until the queue (3) is full.
	accepted := 0
	for _, g := range []string{report, "broken goal", report, report, report, report} {
		if c.Submit(run(g)) {
			accepted++
		}
	}
	if accepted < 3 || accepted > 4 {
		// 3 queued, plus 1 if the worker already took one.
		t.Fatalf("accepted %d runs with a stuck collector and queue 3", accepted)
	}
	if !strings.Contains(logs.String(), "queue full") {
		t.Fatalf("dropped runs were not logged: %s", logs)
	}
	if c.Submit(finishedRun("ann", report, contracts.RunRunning)) {
		t.Fatal("an unfinished run was queued")
	}
	if len(list(t, m, "ann", "")) != 0 {
		t.Fatal("collected while the embedder was closed")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	short, stop := context.WithCancel(ctx)
	stop()
	testerr.Code(t, c.Flush(short), contracts.CodeCancelled)
	close(emb.gate)
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if plans := list(t, m, "ann", patterns.NSPlan); len(plans) != 1 || plans[0].Successes != accepted-1 {
		t.Fatalf("Flush returned before the queue was collected: %+v", plans)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	plans := list(t, m, "ann", patterns.NSPlan)
	if len(plans) != 1 || plans[0].Successes != accepted-1 {
		t.Fatalf("after drain: %+v (accepted %d, one failing)", plans, accepted)
	}
	if !strings.Contains(logs.String(), "collection failed") || !strings.Contains(logs.String(), "embedding service down") {
		t.Fatalf("a failed collection was not logged: %s", logs)
	}
	if c.Submit(run(report)) {
		t.Fatal("Submit after Close queued a run")
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal("second Close:", err)
	}
}

// gatedCollector is a collector into a new memory whose embedder waits
// for its gate.
func gatedCollector(t *testing.T) (*gatedEmbedder, *patterns.Memory, *patterns.Collector) {
	emb := &gatedEmbedder{Hashed: embed.NewHashed(embed.HashedOptions{}), gate: make(chan struct{})}
	m, err := patterns.Open("", emb, patterns.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return emb, m, patterns.NewCollector(m, patterns.CollectorOptions{})
}

func TestCollectorCopiesTheRun(t *testing.T) {
	emb, m, c := gatedCollector(t)
	r := finishedRun("ann", report, contracts.RunCompleted, step{"chat.post", "post the report", true, 1})
	if !c.Submit(r) {
		t.Fatal("not queued")
	}
	r.UserID, r.Goal, r.Steps[0].Tool = "mallory", "changed", "evil.tool"
	close(emb.gate)
	if err := c.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	tools := list(t, m, "ann", patterns.NSTool)
	if len(tools) != 1 || tools[0].Tool != "chat.post" || len(list(t, m, "mallory", "")) != 0 {
		t.Fatalf("the caller's later edit reached memory: %+v", tools)
	}
}

// What the collector copies of a run leaves out the state and the steps'
// payloads and results, which collection never reads: a run may hold
// 64 MiB of them, and the copy is made as the run ends.
func TestCollectorCopiesNoState(t *testing.T) {
	emb, m, c := gatedCollector(t)
	r := finishedRun("ann", report, contracts.RunCompleted, step{"chat.post", "post the report", true, 1})
	big := json.RawMessage(`"` + strings.Repeat("x", 8<<20) + `"`)
	r.State = map[string]json.RawMessage{"text": big}
	r.Steps[0].Payload, r.Steps[0].Result = big, big
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if !c.Submit(r) {
		t.Fatal("not queued")
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("Submit of a run holding 24 MiB of state, payload and result allocated %d bytes", n)
	}
	close(emb.gate)
	if err := c.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if tools := list(t, m, "ann", patterns.NSTool); len(tools) != 1 || tools[0].Tool != "chat.post" {
		t.Fatalf("collected %+v", tools)
	}
}

func TestCollectorCloseHonoursContext(t *testing.T) {
	emb := &gatedEmbedder{Hashed: embed.NewHashed(embed.HashedOptions{}), gate: make(chan struct{})}
	m, _ := patterns.Open("", emb, patterns.Options{})
	c := patterns.NewCollector(m, patterns.CollectorOptions{})
	c.Submit(finishedRun("ann", report, contracts.RunCompleted))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	testerr.Code(t, c.Close(ctx), contracts.CodeCancelled)
	close(emb.gate)
	if err := c.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}
