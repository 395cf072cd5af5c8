package memory

import (
	"context"
	"encoding/json"

	"github.com/ordo-run/ordo/contracts"
)

// Replay reads run id's log and folds it, checking the fold against the
// stored run: it returns the entries up to the stored run's sequence and
// the fold, with CodeCheckpointFormat when the two differ. The run is
// loaded before its log is read, and entries a writer appended after the
// load are left for the next replay, so a run being driven right now
// replays as the run it was at the load rather than as a false mismatch.
func Replay(ctx context.Context, c Checkpointer, id string) ([]contracts.RunDelta, *contracts.Run, error) {
	stored, err := c.Load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	entries, err := c.Log(ctx, id, 0, 0)
	if err != nil {
		return nil, nil, err
	}
	for len(entries) > 0 && entries[len(entries)-1].Seq > stored.Seq {
		entries = entries[:len(entries)-1]
	}
	folded, err := contracts.FoldRun(entries)
	if err != nil {
		return nil, nil, err
	}
	fj, err := json.Marshal(folded)
	if err != nil {
		return nil, nil, err
	}
	sj, err := json.Marshal(stored)
	if err != nil {
		return nil, nil, err
	}
	if string(fj) != string(sj) {
		return entries, folded, contracts.Errorf(contracts.CodeCheckpointFormat, "run %s rebuilt from its %d log entries differs from the stored run", id, len(entries)).
			With("run_id", id).With("entries", len(entries)).With("folded_seq", folded.Seq).With("stored_seq", stored.Seq)
	}
	return entries, folded, nil
}
