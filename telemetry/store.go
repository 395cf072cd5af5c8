package telemetry

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// Store wraps st so that every checkpoint write's latency is observed
// under the store's name (embedded, postgres). When st is a memory.Leaser
// (the engine then leases runs) so is the result, and every run it claims
// from a dead driver counts as a lease takeover.
func (m *Metrics) Store(st memory.Checkpointer, name string) memory.Checkpointer {
	o := observedStore{Checkpointer: st, writes: m.checkpoint.WithLabelValues(name)}
	ls, ok := st.(memory.Leaser)
	if !ok {
		return o
	}
	ol := observedLeaser{observedStore: o, Leaser: ls, takeovers: m.takeovers}
	if lsv, ok := st.(memory.LeaseSaver); ok {
		return observedLeaseSaver{ol, lsv}
	}
	return ol
}

type observedStore struct {
	memory.Checkpointer
	writes prometheus.Observer
}

func (s observedStore) Save(ctx context.Context, run *contracts.Run) error {
	return s.observe(func() error { return s.Checkpointer.Save(ctx, run) })
}

func (s observedStore) observe(write func() error) error {
	start := time.Now()
	err := write()
	s.writes.Observe(time.Since(start).Seconds())
	return err
}

// observedLeaseSaver keeps a store's leased first write (one write, not
// a Save and an Acquire) and observes it as a checkpoint write.
type observedLeaseSaver struct {
	observedLeaser
	ls memory.LeaseSaver
}

func (s observedLeaseSaver) SaveLeased(ctx context.Context, run *contracts.Run, owner string, ttl time.Duration) error {
	return s.observe(func() error { return s.ls.SaveLeased(ctx, run, owner, ttl) })
}

type observedLeaser struct {
	observedStore
	memory.Leaser
	takeovers prometheus.Counter
}

func (s observedLeaser) ClaimExpired(ctx context.Context, owner string, ttl time.Duration, limit int) ([]string, error) {
	ids, err := s.Leaser.ClaimExpired(ctx, owner, ttl, limit)
	s.takeovers.Add(float64(len(ids)))
	return ids, err
}
