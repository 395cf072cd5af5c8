package agent

import (
	"context"

	"github.com/ordo-run/ordo/contracts"
)

// This file holds a run's transitions, the only code that writes runs:
// the lease prologue (withRun), the one switch on what to do with a run in
// each status (advance), and the writes that end a step boundary (save,
// interrupt, fail, finish). Every write appends one entry to the run's log.

// withRun holds runID's lease, loads the run and hands it to step; the
// lease is let go with step's result (keepOnCancel: see hold).
func (e *Engine) withRun(ctx context.Context, runID string, keepOnCancel bool, step func(context.Context, *contracts.Run) error) (_ *contracts.Run, err error) {
	ctx, end, err := e.hold(ctx, runID)
	if err != nil {
		return nil, err
	}
	defer func() { end(err, keepOnCancel) }()
	run, err := e.deps.Store.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	return run, step(ctx, run)
}

// caller says who asks advance to move a run on.
type caller int

const (
	byExecute caller = iota // Execute: a ready run, or one a stopped process left
	byResume                // Resume: a person's decision (or none, to continue)
	byRecover               // Recover: a run whose driver died
)

// advance moves a loaded, held run on from wherever it stands: the one
// place that decides what each status allows. A finished run cannot move;
// an interrupted one moves only with a decision that fits; a pending run
// with its checked plan continues after planning; a ready or running one
// executes (a call that was in flight is re-issued under its key).
func (e *Engine) advance(ctx context.Context, run *contracts.Run, by caller, d contracts.Decision) (err error) {
	ctx, span := startSpan(ctx, driveSpans[by], attrRun(run.ID))
	defer func() { endSpan(span, run, err) }()
	switch {
	case run.Status.Final():
		if by == byRecover {
			return nil
		}
		return contracts.Errorf(contracts.CodeRunAlreadyFinished, "run %s is %s", run.ID, run.Status).With("run", run.ID)
	case run.Status == contracts.RunInterrupted && run.Interrupt != nil:
		switch by {
		case byResume:
			return e.decide(ctx, run, d)
		case byExecute:
			return contracts.Errorf(contracts.CodeInvalidInput, "run %s waits for a %s decision: resume it", run.ID, run.Interrupt.Kind).
				With("run", run.ID).With("interrupt", run.Interrupt.Kind)
		}
		return nil // it waits for its person; Recover only lets the lease go
	case by == byResume && d.Kind != "":
		return contracts.Errorf(contracts.CodeRunNotInterrupted, "run %s is %s and waits for no decision", run.ID, run.Status).With("run", run.ID)
	case planned(run):
		return e.continuePlanned(ctx, run)
	case run.Status == contracts.RunPending:
		if by == byRecover {
			return e.fail(ctx, run, contracts.Errorf(contracts.CodePlanFailed,
				"the server planning this run stopped before the plan was checkpointed; plan the goal again").With("run", run.ID))
		}
		return contracts.Errorf(contracts.CodeInvalidInput, "run %s has no plan yet", run.ID).With("run", run.ID)
	case run.Status == contracts.RunInterrupted:
		return contracts.Errorf(contracts.CodeRunNotInterrupted, "run %s is interrupted with no question", run.ID).With("run", run.ID)
	}
	switch by {
	case byResume:
		e.emit(ctx, run, EventResumed, "", "", "continue")
	case byRecover:
		e.emit(ctx, run, EventResumed, "", "", "recovered by "+e.cfg.Owner)
	}
	return e.execute(ctx, run, nil)
}

// save appends what changed in run since its last write to its log, as
// its next sequence number. A refused write (CodeSequenceConflict: another
// process advanced the run) is returned as is; the caller must stop
// driving the run. Saving never observes cancellation so a cancelled run
// still leaves its checkpoint. Once the run's lease is lost nothing more is
// written (CodeLeaseHeld); see saved for how a write moves the lease.
func (e *Engine) save(ctx context.Context, run *contracts.Run) error {
	if err := checkLease(ctx, run.ID); err != nil {
		return err
	}
	run.Seq++
	run.UpdatedAt = e.now()
	leased, err := e.write(context.WithoutCancel(ctx), run)
	if err != nil {
		run.Seq--
		if contracts.CodeOf(err) == contracts.CodeSequenceConflict {
			e.log.Warn("run advanced elsewhere; stopping", "run_id", run.ID, "seq", run.Seq+1)
			return err
		}
		return contracts.Errorf(contracts.CodeStore, "checkpoint run %s: %w", run.ID, err).With("run", run.ID)
	}
	if o, _ := ctx.Value(owedKey{}).(*owed); o != nil {
		o.due = false
	}
	if run.Status.Final() {
		e.typed.forget(run.ID)
	}
	if err := e.saved(ctx, run, leased); err != nil {
		return err
	}
	e.remember(run)
	return nil
}

// A drive writes a change of its run only when it must be durable: before
// the run's next effect (a tool call), before the run waits for a person
// or ends, and before a slow model call. A change that need not be durable
// yet (the status set running, the last step's result when the run is
// about to finish) is owed instead, and the write that is due anyway
// carries it in the same entry: one disk sync where there were two. The
// store's log is the same as if each change had been written, only with
// fewer, larger entries. A crash loses nothing a caller or a person was
// told; a call whose result was not written yet is re-issued under its
// idempotency key, as one cut off in flight is.

// owed is the checkpoint a drive (execute) owes its run.
type owed struct{ due bool }

type owedKey struct{}

// owing starts a drive that owes its run a checkpoint (of the change the
// caller makes next); settle writes what is still owed when the drive
// returns without an error.
func (e *Engine) owing(ctx context.Context, run *contracts.Run) (_ context.Context, settle func(error) error) {
	o := &owed{due: true}
	ctx = context.WithValue(ctx, owedKey{}, o)
	return ctx, func(err error) error {
		if err != nil {
			return err
		}
		return e.flush(ctx, run)
	}
}

// owe records a change of run to be written by the next save, or saves it
// now outside a drive that can owe it.
func (e *Engine) owe(ctx context.Context, run *contracts.Run) error {
	o, _ := ctx.Value(owedKey{}).(*owed)
	if o == nil {
		return e.save(ctx, run)
	}
	o.due = true
	return nil
}

// flush writes the checkpoint the drive owes, if any: before an effect.
func (e *Engine) flush(ctx context.Context, run *contracts.Run) error {
	if o, _ := ctx.Value(owedKey{}).(*owed); o == nil || !o.due {
		return nil
	}
	return e.save(ctx, run)
}

// interrupt records in as the run's question and checkpoints it.
func (e *Engine) interrupt(ctx context.Context, run *contracts.Run, in *contracts.Interrupt) error {
	in.CreatedAt = e.now()
	// What a person reads may be a model's words (the planner's questions,
	// the critic's): shown in terminals, as answers are (printable).
	in.Message = printable(in.Message)
	if in.Questions != nil {
		qs := make([]string, len(in.Questions))
		for i, q := range in.Questions {
			qs[i] = printable(q)
		}
		in.Questions = qs
	}
	run.Interrupt = in
	run.Status = contracts.RunInterrupted
	if err := e.save(ctx, run); err != nil {
		return err
	}
	e.emit(ctx, run, EventInterrupted, in.ActionID, in.Tool, string(in.Kind)+": "+in.Message)
	return nil
}

// fail ends the run closed: the coded error, a template answer saying what
// happened, and the audit trail as it stands.
func (e *Engine) fail(ctx context.Context, run *contracts.Run, err error) error {
	run.Status = contracts.RunFailed
	run.Error = contracts.AsError(err)
	run.Interrupt = nil
	run.Result = &contracts.RunResult{Answer: e.templateAnswer(run), Composer: "template"}
	if serr := e.save(ctx, run); serr != nil {
		return serr
	}
	e.emit(ctx, run, EventFailed, "", "", run.Error.Message)
	return nil
}

// finish ends the run as completed or rejected with a composed answer: one
// composer LLM call, or a template when there is no model, it fails, or
// the run is a direct tool call.
func (e *Engine) finish(ctx context.Context, run *contracts.Run, status contracts.RunStatus) error {
	if e.composesWithModel(ctx, run) { // a model call may be slow: what is owed is written first
		if err := e.flush(ctx, run); err != nil {
			return err
		}
	}
	run.Status = status
	run.Interrupt = nil
	run.Result = e.compose(ctx, run)
	if err := e.save(ctx, run); err != nil {
		return err
	}
	kind := EventCompleted
	if status == contracts.RunRejected {
		kind = EventRejected
	}
	e.emit(ctx, run, kind, "", "", run.Result.Answer)
	return nil
}
