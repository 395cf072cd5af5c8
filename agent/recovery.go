package agent

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// Recover claims runs whose driver died (their lease expired without
// being released) and continues each from its last checkpoint, returning
// when every claimed run has reached its next stop. A step that was in
// flight is re-issued with its idempotency key. Runs left pending by a
// process that died before leasing them fail closed. It returns the ids
// it took; a run that could not be continued is logged and left to its lease.
// Without a leasing store there is nothing to claim.
func (e *Engine) Recover(ctx context.Context) ([]string, error) {
	ls, ok := e.deps.Store.(memory.Leaser)
	if !ok {
		return nil, nil
	}
	ids, err := ls.ClaimExpired(ctx, e.cfg.Owner, e.cfg.LeaseTTL, e.cfg.Parallelism)
	if err != nil {
		return nil, err
	}
	orphans, err := e.orphans(ctx, ids)
	if err != nil {
		return nil, err
	}
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got = ids
	)
	for _, id := range ids {
		wg.Go(func() { e.recoverRun(ctx, id) })
	}
	for _, id := range orphans {
		wg.Go(func() {
			if e.recoverRun(ctx, id) {
				mu.Lock()
				got = append(got, id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return got, nil
}

// orphans are runs still pending a lease-ttl after their last checkpoint
// and not among claimed: a live planner holds its run's lease (so taking
// it fails and the run is left alone), but a process that died between
// creating a run and leasing it left one that no lease will ever expire on.
func (e *Engine) orphans(ctx context.Context, claimed []string) ([]string, error) {
	sums, err := e.deps.Store.List(ctx, memory.Filter{
		Status: []contracts.RunStatus{contracts.RunPending}, UpdatedBefore: e.now().Add(-e.cfg.LeaseTTL), Limit: e.cfg.Parallelism,
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range sums {
		if !slices.Contains(claimed, s.ID) {
			out = append(out, s.ID)
		}
	}
	return out, nil
}

// Watch calls Recover every interval until ctx ends, so a server picks up
// the runs of servers that died. Runs it is continuing when ctx ends stop
// at their next step boundary and keep their lease until it expires, so
// another server's Watch takes them over.
func (e *Engine) Watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if _, err := e.Recover(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("claiming expired runs failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// recoverRun drives one run to its next stop and says whether it did.
func (e *Engine) recoverRun(ctx context.Context, id string) bool {
	run, err := e.continueRun(ctx, id)
	switch {
	case contracts.CodeOf(err) == contracts.CodeLeaseHeld:
		e.log.Debug("run is driven elsewhere", "run_id", id)
		return false
	case err != nil:
		e.log.Warn("recovering a run failed", "run_id", id, "err", err)
		return false
	}
	e.log.Info("recovered run", "run_id", id, "status", run.Status)
	return true
}

// continueRun holds id's lease and moves the run on as Recover does
// (advance): running and ready runs execute on, and so does a pending run
// whose checked plan was checkpointed; a run whose planning was cut short
// before that fails closed, since the planner's inputs were never
// checkpointed; an interrupted run waits for its person, so its lease is
// just released.
func (e *Engine) continueRun(ctx context.Context, id string) (*contracts.Run, error) {
	return e.withRun(ctx, id, true, func(ctx context.Context, run *contracts.Run) error {
		return e.advance(ctx, run, byRecover, contracts.Decision{})
	})
}
