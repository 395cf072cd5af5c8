package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// writingStore is a store another process writes to while it is read:
// every Load and Log first appends a step to the run.
type writingStore struct {
	*memory.MemStore
	run *contracts.Run
}

func (w *writingStore) step(ctx context.Context) error {
	w.run.Seq++
	w.run.Steps = append(w.run.Steps, contracts.StepRecord{ActionID: "a", Tool: "t.x", PlanVersion: 1, Attempt: int(w.run.Seq), Status: contracts.StepSucceeded, StartedAt: time.Unix(0, 0).UTC()})
	return w.MemStore.Save(ctx, w.run)
}

func (w *writingStore) Load(ctx context.Context, id string) (*contracts.Run, error) {
	if err := w.step(ctx); err != nil {
		return nil, err
	}
	return w.MemStore.Load(ctx, id)
}

func (w *writingStore) Log(ctx context.Context, id string, after int64, limit int) ([]contracts.RunDelta, error) {
	if err := w.step(ctx); err != nil {
		return nil, err
	}
	return w.MemStore.Log(ctx, id, after, limit)
}

// A run being written while it is replayed replays as the run it was when
// loaded, not as a mismatch between its log and the stored run.
func TestReplayOfARunBeingWritten(t *testing.T) {
	ctx := context.Background()
	st := &writingStore{MemStore: memory.NewMemStore()}
	st.run = &contracts.Run{ID: "run_live", Status: contracts.RunRunning, Goal: "g", Seq: 1, CreatedAt: time.Unix(0, 0).UTC()}
	if err := st.MemStore.Save(ctx, st.run); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		st.run.Seq++
		if err := st.MemStore.Save(ctx, st.run); err != nil {
			t.Fatal(err)
		}
	}
	entries, folded, err := memory.Replay(ctx, st, "run_live")
	if err != nil {
		t.Fatalf("replay of a live run: %v", err)
	}
	if len(entries) != 4 || folded.Seq != 4 {
		t.Fatalf("%d entries folded to seq %d, want 4 and 4 (the run as loaded)", len(entries), folded.Seq)
	}
	if _, _, err := memory.Replay(ctx, st, "run_missing"); contracts.CodeOf(err) != contracts.CodeRunNotFound {
		t.Fatalf("replay of an unknown run: %v", err)
	}
}
