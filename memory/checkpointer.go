package memory

import (
	"context"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Checkpointer stores runs at step boundaries so that any process sharing
// the store can resume one exactly where it stopped.
//
// Save writes run as the checkpoint numbered run.Seq. It succeeds only if
// run.Seq is one more than the stored sequence (1 for a new run); any other
// value is refused with contracts.CodeSequenceConflict, so two processes can
// never both advance one run. Load returns contracts.CodeRunNotFound for an
// unknown id.
type Checkpointer interface {
	Save(ctx context.Context, run *contracts.Run) error
	Load(ctx context.Context, id string) (*contracts.Run, error)
	List(ctx context.Context, f Filter) ([]RunSummary, error)
	// Prune deletes finished runs last updated before olderThan and
	// returns how many it deleted. Unfinished runs are never pruned.
	Prune(ctx context.Context, olderThan time.Time) (int, error)
	Close() error
}

// Filter selects runs for List. Zero fields select everything.
type Filter struct {
	Status        []contracts.RunStatus
	UserID        string
	UpdatedAfter  time.Time
	UpdatedBefore time.Time
	Limit         int // newest first; 0 means no limit
}

// RunSummary is one row of List.
type RunSummary struct {
	ID        string              `json:"id"`
	UserID    string              `json:"user_id,omitempty"`
	Goal      string              `json:"goal"`
	Status    contracts.RunStatus `json:"status"`
	Seq       int64               `json:"seq"`
	CreatedAt time.Time           `json:"created_at"`
	UpdatedAt time.Time           `json:"updated_at"`
}
