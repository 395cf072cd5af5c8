package telemetry

import (
	"context"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// TestStoreKeepsLeasedSave: the observed store still creates a run with
// its lease in one write where the store can, and counts that write.
func TestStoreKeepsLeasedSave(t *testing.T) {
	m := New()
	st, ok := m.Store(memory.NewMemStore(), "memory").(interface {
		memory.LeaseSaver
		memory.Leaser
	})
	if !ok {
		t.Fatal("the observed store lost LeaseSaver or Leaser")
	}
	ctx := context.Background()
	run := &contracts.Run{FormatVersion: contracts.RunFormatVersion, ID: "r", Status: contracts.RunRunning, Seq: 1}
	if err := st.SaveLeased(ctx, run, "A", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := st.Acquire(ctx, "r", "B", time.Minute); contracts.CodeOf(err) != contracts.CodeLeaseHeld {
		t.Fatalf("the leased save left the run free: %v", err)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "ordo_checkpoint_write_duration_seconds" {
			if n := f.GetMetric()[0].GetHistogram().GetSampleCount(); n != 1 {
				t.Fatalf("%d writes observed, want 1", n)
			}
			return
		}
	}
	t.Fatal("no checkpoint write observed")
}
