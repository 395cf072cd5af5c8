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
	if ls, ok := st.(memory.Leaser); ok {
		return observedLeaser{observedStore: o, Leaser: ls, takeovers: m.takeovers}
	}
	return o
}

type observedStore struct {
	memory.Checkpointer
	writes prometheus.Observer
}

func (s observedStore) Save(ctx context.Context, run *contracts.Run) error {
	start := time.Now()
	err := s.Checkpointer.Save(ctx, run)
	s.writes.Observe(time.Since(start).Seconds())
	return err
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
