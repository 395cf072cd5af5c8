package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/ids"
	"github.com/ordo-run/ordo/memory"
)

// DefaultLeaseTTL is how long a run's lease lasts without renewal. The
// engine renews every third of it, so a server that died is replaced
// within about this long.
const DefaultLeaseTTL = 30 * time.Second

// errLeaseLost cancels a drive whose lease another server took.
var errLeaseLost = errors.New("the run's lease was lost")

// defaultOwner names an engine in leases: host, process and a random
// suffix, so two engines in one process are two owners.
func defaultOwner() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", h, os.Getpid(), ids.Hex(4))
}

// Owner is the id this engine writes into the leases it holds.
func (e *Engine) Owner() string { return e.cfg.Owner }

// TryLease takes runID's lease and gives it back at once: nil when this
// engine could drive the run now (nobody holds the lease, or its holder
// let it expire), else the store's CodeLeaseHeld, which names the holder
// and how long its lease has left. A command that asks a person before it
// drives a run looks first, so that nobody answers for nothing.
func (e *Engine) TryLease(ctx context.Context, runID string) error {
	_, end, err := e.hold(ctx, runID)
	if err != nil {
		return err
	}
	end(nil, false)
	return nil
}

// lease is this engine's hold on one run, shared by the calls of this
// engine that drive it at once (the store's sequence check decides
// between them) and renewed by one goroutine until the last lets go.
type lease struct {
	runID string
	refs  int
	lost  context.Context // done once another owner may have the run
	lose  context.CancelCauseFunc
	stop  chan struct{}
	done  chan struct{}
}

// drive is one engine call's claim, carried in its context so that save
// refuses to write once the lease is lost and so that the call stops.
type drive struct {
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	l      *lease
	unhook func() bool
	rested bool // its last checkpoint put the run at rest, and the store let the lease go
}

type driveKey struct{}

// lease is the lease d holds (nil: none yet).
func (d *drive) lease() *lease {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.l
}

func driveOf(ctx context.Context) *drive {
	d, _ := ctx.Value(driveKey{}).(*drive)
	return d
}

// hold takes runID's lease (when the store has leases) before a call
// loads and drives the run. Another owner's live lease is CodeLeaseHeld.
// The returned end lets it go; see letGo for when it is released.
func (e *Engine) hold(ctx context.Context, runID string) (context.Context, func(err error, keepOnCancel bool), error) {
	ctx, d := e.newDrive(ctx)
	if d == nil {
		return ctx, func(error, bool) {}, nil
	}
	if err := e.attach(ctx, d, runID, false); err != nil {
		d.cancel(err)
		return ctx, nil, err
	}
	return ctx, func(err error, keep bool) { e.letGo(ctx, d, err, keep) }, nil
}

// holdNew prepares a call that creates a run (Plan, Run): the lease is
// taken by save right after the run's first checkpoint (see saved). A call nested in
// one that already holds (Plan inside Run) shares its claim.
func (e *Engine) holdNew(ctx context.Context) (context.Context, func(err error)) {
	if driveOf(ctx) != nil {
		return ctx, func(error) {}
	}
	ctx, d := e.newDrive(ctx)
	if d == nil {
		return ctx, func(error) {}
	}
	return ctx, func(err error) { e.letGo(ctx, d, err, false) }
}

func (e *Engine) newDrive(ctx context.Context) (context.Context, *drive) {
	if _, ok := e.deps.Store.(memory.Leaser); !ok {
		return ctx, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	d := &drive{cancel: cancel}
	return context.WithValue(ctx, driveKey{}, d), d
}

// attach takes the lease for d (the store already gave it: leased);
// losing it later cancels d's context.
func (e *Engine) attach(ctx context.Context, d *drive, runID string, leased bool) error {
	l, err := e.take(ctx, runID, leased)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.l = l
	d.unhook = context.AfterFunc(l.lost, func() { d.cancel(errLeaseLost) })
	d.mu.Unlock()
	return nil
}

// write stores run's checkpoint for save. A creating call's first
// checkpoint that does not put the run at rest takes the new run's lease
// in the same write where the store can (memory.LeaseSaver): leased.
func (e *Engine) write(ctx context.Context, run *contracts.Run) (leased bool, err error) {
	if ls, ok := e.deps.Store.(memory.LeaseSaver); ok && run.Seq == 1 && !memory.AtRest(run.Status) {
		if d := driveOf(ctx); d != nil && d.lease() == nil {
			return true, ls.SaveLeased(ctx, run, e.cfg.Owner, e.cfg.LeaseTTL)
		}
	}
	return false, e.deps.Store.Save(ctx, run)
}

// saved is save's hook on the drive's lease. A checkpoint that puts the
// run at rest (memory.AtRest: it waits for a person, or is finished) let
// the run's lease go in the store, in the same write: this engine forgets
// it, and the drive ends without a write to release it. Any other
// checkpoint of a creating call that holds no lease yet (its first) takes
// the new run's lease (leased: the write took it) before the call does
// anything else with the run; a run whose first checkpoint already rests
// is never leased.
func (e *Engine) saved(ctx context.Context, run *contracts.Run, leased bool) error {
	d := driveOf(ctx)
	if d == nil {
		return nil
	}
	rested := memory.AtRest(run.Status)
	d.mu.Lock()
	l := d.l
	d.rested = rested
	d.mu.Unlock()
	switch {
	case rested && l != nil:
		e.forget(l)
	case !rested && l == nil:
		return e.attach(ctx, d, run.ID, leased)
	}
	return nil
}

// checkLease refuses a write once the lease is lost: another server may
// be driving the run, and only the store's sequence check would stop us.
func checkLease(ctx context.Context, runID string) error {
	d := driveOf(ctx)
	if d == nil {
		return nil
	}
	if l := d.lease(); l != nil && l.lost.Err() != nil {
		return contracts.Errorf(contracts.CodeLeaseHeld, "run %s: this server lost its lease; another server drives the run", runID).
			With("run", runID)
	}
	return nil
}

// letGo ends a drive. The lease is released (so an approval can go to
// any server at once) unless the store already let it go with the
// checkpoint that put the run at rest, the call ended on a store failure,
// or keepOnCancel is set and the caller cancelled: then the lease is left
// to expire and another server's Watch picks the run up.
func (e *Engine) letGo(ctx context.Context, d *drive, err error, keepOnCancel bool) {
	d.mu.Lock()
	l, rested := d.l, d.rested
	if d.unhook != nil {
		d.unhook()
	}
	d.mu.Unlock()
	keep := contracts.CodeOf(err) == contracts.CodeStore || (keepOnCancel && context.Cause(ctx) != nil && !errors.Is(context.Cause(ctx), errLeaseLost))
	d.cancel(context.Canceled)
	if l != nil {
		e.drop(l, !keep && !rested)
	}
}

// take returns this engine's lease on runID, acquiring it from the store
// if no call of this engine holds it yet (unless the store just gave it:
// leased).
func (e *Engine) take(ctx context.Context, runID string, leased bool) (*lease, error) {
	e.leaseMu.Lock()
	defer e.leaseMu.Unlock()
	if l, ok := e.leases[runID]; ok && l.lost.Err() == nil {
		l.refs++
		return l, nil
	}
	ls := e.deps.Store.(memory.Leaser)
	if !leased {
		if err := ls.Acquire(ctx, runID, e.cfg.Owner, e.cfg.LeaseTTL); err != nil {
			return nil, err
		}
	}
	lost, lose := context.WithCancelCause(context.Background())
	l := &lease{runID: runID, refs: 1, lost: lost, lose: lose, stop: make(chan struct{}), done: make(chan struct{})}
	e.leases[runID] = l
	go e.renew(ls, l)
	return l, nil
}

// renew extends l every third of the ttl until stopped. A refusal means
// another owner took the run; so does failing to renew for a whole ttl.
func (e *Engine) renew(ls memory.Leaser, l *lease) {
	defer close(l.done)
	ttl := e.cfg.LeaseTTL
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), ttl/3)
		err := ls.Renew(ctx, l.runID, e.cfg.Owner, ttl)
		cancel()
		switch {
		case err == nil:
			last = time.Now()
			continue
		case contracts.CodeOf(err) == contracts.CodeLeaseHeld || contracts.CodeOf(err) == contracts.CodeRunNotFound:
		case time.Since(last) < ttl:
			e.log.Warn("lease renewal failed; retrying", "run_id", l.runID, "err", err)
			continue
		}
		e.log.Warn("lease lost; stopping the run", "run_id", l.runID, "err", err)
		e.forget(l)
		l.lose(errLeaseLost)
		return
	}
}

// forget removes a lost lease so that a later call acquires afresh.
func (e *Engine) forget(l *lease) {
	e.leaseMu.Lock()
	if e.leases[l.runID] == l {
		delete(e.leases, l.runID)
	}
	e.leaseMu.Unlock()
}

// drop lets one call's reference go; the last stops renewing and, if
// release, gives the lease up.
func (e *Engine) drop(l *lease, release bool) {
	e.leaseMu.Lock()
	l.refs--
	last := l.refs == 0
	if last && e.leases[l.runID] == l {
		delete(e.leases, l.runID)
	}
	e.leaseMu.Unlock()
	if !last {
		return
	}
	close(l.stop)
	<-l.done
	if !release || l.lost.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.LeaseTTL)
	defer cancel()
	if err := e.deps.Store.(memory.Leaser).Release(ctx, l.runID, e.cfg.Owner); err != nil {
		e.log.Warn("lease release failed; it will expire", "run_id", l.runID, "err", err)
	}
}
