package memory

import (
	"context"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Checkpointer keeps each run as an append-only log of entries
// (contracts.RunDelta), so that any process sharing the store can resume a
// run exactly where it stopped and a client can follow it entry by entry.
//
// Save appends run.Delta() as entry number run.Seq: the whole run for a
// new run, else only what changed since the run was loaded or last saved,
// so a step boundary writes O(1) bytes whatever the run's length. It
// succeeds only if run.Seq is one more than the stored sequence (1 for a new
// run); any other value is refused with contracts.CodeSequenceConflict, so
// two processes can never both advance one run. On success the store marks
// the run logged (run.MarkLogged). Now and then (a new run, a run waiting
// for a person or finished, a log since the last snapshot larger than the
// snapshot) the store also keeps a snapshot of the whole run, so that Load
// reads a snapshot and a short tail. A Save that puts the run at rest
// (AtRest) also lets its lease go (Leaser), in the same write: nobody
// drives a run that waits for a person or is finished, so its driver need
// not write again to release it. Load folds the run from its log and
// returns contracts.CodeRunNotFound for an unknown id.
type Checkpointer interface {
	Save(ctx context.Context, run *contracts.Run) error
	Load(ctx context.Context, id string) (*contracts.Run, error)
	// Log returns up to limit entries of run id with Seq > after, in order
	// (limit <= 0: all). Where compaction folded entries after `after`
	// away, the first entry returned is a whole run (RunDelta.Run) at the
	// sequence it was folded to. An unknown run is CodeRunNotFound.
	Log(ctx context.Context, id string, after int64, limit int) ([]contracts.RunDelta, error)
	List(ctx context.Context, f Filter) ([]RunSummary, error)
	// Prune deletes finished runs last updated before olderThan, log and
	// snapshots with them, and returns how many it deleted. Unfinished runs
	// are never pruned.
	Prune(ctx context.Context, olderThan time.Time) (int, error)
	// Compact folds the log of every finished run last updated before
	// olderThan into one whole-run entry at the run's last sequence and
	// returns how many runs it folded. Load gives the same run after it.
	Compact(ctx context.Context, olderThan time.Time) (int, error)
	// Delete deletes the runs ids, log and snapshots with them, whatever
	// their status: all of them or, with a coded error, none. An unknown id
	// is CodeRunNotFound; a run whose lease is live (a process drives it)
	// is CodeLeaseHeld, so a run is never deleted under its driver.
	Delete(ctx context.Context, ids []string) error
	Close() error
}

// AtRest reports whether a run in status st is at rest: waiting for a
// person (interrupted) or finished. Its driver stops with the write that
// puts it there, and the store lets its lease go with that write.
func AtRest(st contracts.RunStatus) bool {
	return st == contracts.RunInterrupted || st.Final()
}

// Filter selects runs for List. Zero fields select everything.
type Filter struct {
	Status        []contracts.RunStatus
	UserID        string
	SessionID     string // the turns of one session (with UserID: that user's session)
	InSession     bool   // only runs that are turns of some session
	UpdatedAfter  time.Time
	UpdatedBefore time.Time
	// BeforeID, with UpdatedBefore, also lets through the runs updated
	// exactly at UpdatedBefore whose id sorts before it: the position
	// after the last run of a page in the list's order (updated_at, then
	// id, both descending), so paging skips none of the runs that share
	// that time.
	BeforeID string
	Limit    int // newest first; 0 means no limit
}

// RunSummary is one row of List.
type RunSummary struct {
	ID        string              `json:"id"`
	UserID    string              `json:"user_id,omitempty"`
	SessionID string              `json:"session_id,omitempty"`
	Goal      string              `json:"goal"`
	Status    contracts.RunStatus `json:"status"`
	Seq       int64               `json:"seq"`
	CreatedAt time.Time           `json:"created_at"`
	UpdatedAt time.Time           `json:"updated_at"`
}

// Leaser is implemented by stores that can say which process drives a run,
// so several servers sharing a store never drive one run at once and a run
// whose driver died is picked up by another. A lease is an owner id and an
// expiry on the store's clock; the owner renews it while it works.
type Leaser interface {
	// Acquire gives owner the lease on runID for ttl. It succeeds if the run
	// has no lease, the lease expired, or owner already holds it; otherwise
	// it returns contracts.CodeLeaseHeld. Unknown runs give CodeRunNotFound.
	Acquire(ctx context.Context, runID, owner string, ttl time.Duration) error
	// Renew extends owner's lease; CodeLeaseHeld if owner no longer holds it
	// (it expired and someone else took it, or it was released).
	Renew(ctx context.Context, runID, owner string, ttl time.Duration) error
	// Release gives the lease up; releasing a lease owner does not hold is a
	// no-op, so it is safe in deferred clean-up.
	Release(ctx context.Context, runID, owner string) error
	// ClaimExpired takes the lease, for owner, on up to limit unfinished
	// runs whose lease expired (their driver died) and returns their ids.
	// Runs that were released or never leased are not claimed: nobody was
	// driving them.
	ClaimExpired(ctx context.Context, owner string, ttl time.Duration, limit int) ([]string, error)
}

// LeaseSaver is implemented by leasing stores that can take a new run's
// lease in the write that creates it: a new run costs one write, not a
// Save and an Acquire.
type LeaseSaver interface {
	// SaveLeased is Save of a new run (Seq 1) that also gives owner the
	// run's lease for ttl, in the same write: both or, with Save's errors,
	// neither. A run of any other Seq is CodeInvalidInput.
	SaveLeased(ctx context.Context, run *contracts.Run, owner string, ttl time.Duration) error
}

// Importer is implemented by stores that can take a checkpoint exactly as
// another store or an older build wrote it (to move runs between stores).
// The bytes are kept as they are and upgraded when loaded. Import refuses a
// run the store already holds with contracts.CodeSequenceConflict.
type Importer interface {
	Import(ctx context.Context, data []byte, version int) error
}

// CheckDelete refuses a malformed Delete and returns its ids once each,
// in the order given.
func CheckDelete(ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "no run to delete").With("field", "ids")
	}
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id == "" {
			return nil, contracts.Errorf(contracts.CodeInvalidInput, "run id is empty").With("field", "ids")
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// DeleteInTx is Delete for a store that deletes in one database
// transaction: ids are checked, then del deletes them (each once) after
// refusing, through refuse, one that is missing or leased. A refusal is
// returned as it is, any other failure of del as a store error; the
// deleted runs' tail sizes are forgotten.
func DeleteInTx(ids []string, sizes *TailSizes, del func(ids []string, refuse func(error) error) error) error {
	ids, err := CheckDelete(ids)
	if err != nil {
		return err
	}
	var refused error
	err = del(ids, func(e error) error {
		refused = e
		return e
	})
	if refused != nil {
		return refused
	}
	if err != nil {
		return StoreError("delete runs", err)
	}
	for _, id := range ids {
		sizes.Set(id, TailSize{}, true)
	}
	return nil
}

// DeleteHeld is Delete's refusal of a run a process drives: holder has
// its lease for left more.
func DeleteHeld(id, holder string, left time.Duration) error {
	secs := int64((left + time.Second - 1) / time.Second)
	return contracts.Errorf(contracts.CodeLeaseHeld, "run %q is held by %q for %d more seconds; it cannot be deleted while it runs", id, holder, secs).
		With("run_id", id).With("holder", holder).With("expires_in_ms", left.Milliseconds())
}
