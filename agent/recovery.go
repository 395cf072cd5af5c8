package agent

import (
	"context"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// Recover claims runs whose driver died (their lease expired without
// being released) and continues each from its last checkpoint, returning
// when every claimed run has reached its next stop. A step that was in
// flight is re-issued with its idempotency key. It returns the claimed
// ids; a run that could not be continued is logged and left to its lease.
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
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() { e.recoverRun(ctx, id) })
	}
	wg.Wait()
	return ids, nil
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

// recoverRun drives one claimed run to its next stop.
func (e *Engine) recoverRun(ctx context.Context, id string) {
	run, err := e.continueRun(ctx, id)
	if err != nil {
		e.log.Warn("recovering a run failed", "run", id, "err", err)
		return
	}
	e.log.Info("recovered run", "run", id, "status", run.Status)
}

// continueRun holds id's lease and continues it: running and ready runs
// execute on; a run whose planning was cut short fails closed, since the
// caller's request (its plan or context) was never checkpointed; an
// interrupted run waits for its person, so its lease is just released.
func (e *Engine) continueRun(ctx context.Context, id string) (_ *contracts.Run, err error) {
	ctx, end, err := e.hold(ctx, id)
	if err != nil {
		return nil, err
	}
	defer func() { end(err, true) }()
	run, err := e.deps.Store.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	switch run.Status {
	case contracts.RunRunning, contracts.RunReady:
		e.emit(ctx, run, EventResumed, "", "", "recovered by "+e.cfg.Owner)
		return run, e.execute(ctx, run)
	case contracts.RunPending:
		return run, e.fail(ctx, run, contracts.Errorf(contracts.CodePlanFailed,
			"the server planning this run stopped before the plan was checkpointed; plan the goal again").With("run", run.ID))
	}
	return run, nil
}
