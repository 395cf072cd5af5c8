package memory

import (
	"slices"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// CheckRun refuses a run no store may save, naming the offending field.
func CheckRun(run *contracts.Run) error {
	switch {
	case run == nil:
		return contracts.Errorf(contracts.CodeInvalidInput, "run is nil").With("field", "run")
	case run.ID == "":
		return contracts.Errorf(contracts.CodeInvalidInput, "run id is empty").With("field", "id")
	case run.Status == "":
		return contracts.Errorf(contracts.CodeInvalidInput, "run %q has no status", run.ID).With("field", "status")
	}
	return nil
}

// CheckSaveLeased refuses a malformed SaveLeased.
func CheckSaveLeased(run *contracts.Run, owner string, ttl time.Duration) error {
	if err := CheckRun(run); err != nil {
		return err
	}
	if run.Seq != 1 {
		return contracts.Errorf(contracts.CodeInvalidInput, "a leased save creates a run: seq %d is not 1", run.Seq).With("field", "seq")
	}
	return CheckLease(run.ID, owner, ttl, true)
}

// CheckFilter refuses a malformed List filter.
func CheckFilter(f Filter) error {
	if f.Limit < 0 {
		return contracts.Errorf(contracts.CodeInvalidInput, "limit %d is negative", f.Limit).With("field", "limit")
	}
	if f.BeforeID != "" && f.UpdatedBefore.IsZero() {
		return contracts.Errorf(contracts.CodeInvalidInput, "before_id %q needs the time it is before", f.BeforeID).With("field", "before_id")
	}
	return nil
}

// CheckLease refuses malformed lease arguments. runID may be "" where the
// call takes none.
func CheckLease(runID, owner string, ttl time.Duration, needRun bool) error {
	switch {
	case needRun && runID == "":
		return contracts.Errorf(contracts.CodeInvalidInput, "run id is empty").With("field", "run_id")
	case owner == "":
		return contracts.Errorf(contracts.CodeInvalidInput, "lease owner is empty").With("field", "owner")
	case ttl <= 0:
		return contracts.Errorf(contracts.CodeInvalidInput, "lease ttl %s is not positive", ttl).With("field", "ttl")
	}
	return nil
}

// SequenceConflict is the error for a write whose Seq is not stored+1.
func SequenceConflict(id string, seq, stored int64) error {
	return contracts.Errorf(contracts.CodeSequenceConflict,
		"run %q: checkpoint %d refused, the store holds %d (expected %d)", id, seq, stored, stored+1).
		With("run_id", id).With("seq", seq).With("stored_seq", stored)
}

// NotFound is the error for an unknown run id.
func NotFound(id string) error {
	return contracts.Errorf(contracts.CodeRunNotFound, "run %q not found", id).With("run_id", id)
}

// LeaseHeld is the error for a lease owner does not hold: holder ("" if
// none) has it for left more (0 if it lapsed), which the message says so
// that a person knows how long to wait.
func LeaseHeld(id, owner, holder string, left time.Duration) error {
	if holder == "" || holder == owner || left <= 0 {
		return contracts.Errorf(contracts.CodeLeaseHeld, "run %q: lease not held by %q", id, owner).
			With("run_id", id).With("owner", owner).With("holder", holder)
	}
	secs := int64((left + time.Second - 1) / time.Second)
	return contracts.Errorf(contracts.CodeLeaseHeld, "run %q is held by %q for %d more seconds", id, holder, secs).
		With("run_id", id).With("owner", owner).With("holder", holder).With("expires_in_ms", left.Milliseconds())
}

// StoreError wraps a failure of the store itself (disk, database). The
// cause stays reachable, so errors.Is(err, context.Canceled) still works.
func StoreError(op string, err error) error {
	return contracts.Errorf(contracts.CodeStore, "%s: %w", op, err).With("op", op)
}

func checkLimit(limit int) error {
	if limit <= 0 {
		return contracts.Errorf(contracts.CodeInvalidInput, "limit %d is not positive", limit).With("field", "limit")
	}
	return nil
}

// CheckClaim refuses malformed ClaimExpired arguments.
func CheckClaim(owner string, ttl time.Duration, limit int) error {
	if err := CheckLease("", owner, ttl, false); err != nil {
		return err
	}
	return checkLimit(limit)
}

// Summarize is the List row of run.
func Summarize(run *contracts.Run) RunSummary {
	return RunSummary{ID: run.ID, UserID: run.UserID, SessionID: run.SessionID, Goal: run.Goal, Status: run.Status,
		Seq: run.Seq, CreatedAt: run.CreatedAt, UpdatedAt: run.UpdatedAt}
}

// Match reports whether a summary passes the filter.
func (f Filter) Match(s RunSummary) bool {
	if len(f.Status) > 0 && !slices.Contains(f.Status, s.Status) {
		return false
	}
	if f.UserID != "" && s.UserID != f.UserID {
		return false
	}
	if f.SessionID != "" && s.SessionID != f.SessionID || f.InSession && s.SessionID == "" {
		return false
	}
	if !f.UpdatedAfter.IsZero() && !s.UpdatedAt.After(f.UpdatedAfter) {
		return false
	}
	if !f.UpdatedBefore.IsZero() && !s.UpdatedAt.Before(f.UpdatedBefore) &&
		(f.BeforeID == "" || !s.UpdatedAt.Equal(f.UpdatedBefore) || s.ID >= f.BeforeID) {
		return false
	}
	return true
}

// CheckImport decodes a checkpoint offered to Importer.Import and refuses
// one that is unreadable or not a savable run.
func CheckImport(data []byte, version int) (*contracts.Run, error) {
	run, err := DecodeRun(data, version)
	if err != nil {
		return nil, err
	}
	if err := CheckRun(run); err != nil {
		return nil, err
	}
	if run.Seq < 1 {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "run %q: imported checkpoint has seq %d", run.ID, run.Seq).With("field", "seq")
	}
	return run, nil
}
