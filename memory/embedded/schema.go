package embedded

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ordo-run/ordo/contracts"
)

// migrations[v] moves the file's schema from version v to v+1; the version
// lives in PRAGMA user_version. Append only: never edit a released step.
var migrations = []string{
	0: `
CREATE TABLE runs (
	id             TEXT PRIMARY KEY,
	user_id        TEXT NOT NULL,
	goal           TEXT NOT NULL,
	status         TEXT NOT NULL,
	final          INTEGER NOT NULL,  -- 1 when status is final (prunable, never claimed)
	seq            INTEGER NOT NULL,
	format_version INTEGER NOT NULL,  -- of data
	created_at     TEXT NOT NULL,     -- fixed-width UTC RFC 3339 with nanoseconds: sorts as text
	updated_at     TEXT NOT NULL,
	lease_owner    TEXT,
	lease_until    INTEGER,           -- unix nanoseconds
	data           BLOB NOT NULL      -- the checkpoint: the run as versioned JSON
) STRICT;
CREATE INDEX runs_updated ON runs (updated_at DESC, id DESC);
CREATE INDEX runs_user ON runs (user_id, updated_at DESC);
CREATE INDEX runs_lease ON runs (lease_until) WHERE lease_owner IS NOT NULL AND final = 0;
`,
	// 1 -> 2: each run becomes an append-only log of entries plus its latest
	// snapshot; the runs row keeps the summary, the sequence and the lease,
	// and how many bytes were logged since the snapshot. A run's checkpoint
	// becomes its snapshot and a whole-run entry at its sequence, in the
	// format it was written in.
	1: `
-- Rows are appended in rowid order (the pages a group commit writes are
-- the last few, not one per run); (run_id, seq) is a small unique index.
CREATE TABLE run_log (
	id             INTEGER PRIMARY KEY,
	run_id         TEXT NOT NULL,
	seq            INTEGER NOT NULL,
	format_version INTEGER NOT NULL,  -- of data; below 1 only whole-run entries (old checkpoints)
	whole          INTEGER NOT NULL,  -- 1 when the entry carries the whole run
	data           BLOB NOT NULL,     -- the entry: a contracts.RunDelta as JSON
	UNIQUE (run_id, seq)
) STRICT;
CREATE TABLE run_snapshots (
	run_id         TEXT PRIMARY KEY,
	seq            INTEGER NOT NULL,
	format_version INTEGER NOT NULL,  -- of data
	data           BLOB NOT NULL      -- the whole run at seq, as a checkpoint
) STRICT;
INSERT INTO run_snapshots (run_id, seq, format_version, data) SELECT id, seq, format_version, data FROM runs;
INSERT INTO run_log (run_id, seq, format_version, whole, data)
	SELECT id, seq, format_version, 1,
		CAST(json_object('seq', seq, 'updated_at', updated_at, 'run', json(CAST(data AS TEXT))) AS BLOB) FROM runs;
ALTER TABLE runs ADD COLUMN tail_bytes INTEGER NOT NULL DEFAULT 0; -- entry bytes logged after the snapshot
ALTER TABLE runs ADD COLUMN snap_bytes INTEGER NOT NULL DEFAULT 0; -- the snapshot's bytes
UPDATE runs SET snap_bytes = length(data);
ALTER TABLE runs DROP COLUMN data;
ALTER TABLE runs DROP COLUMN format_version;
`,
	// 2 -> 3: a run may be a turn of its user's session (contracts.Run.SessionID).
	2: `
ALTER TABLE runs ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_session ON runs (user_id, session_id, updated_at DESC) WHERE session_id <> '';
`,
	// 3 -> 4: people's requests to a run's driver (pause, cancel; requests.go).
	3: `
CREATE TABLE IF NOT EXISTS run_requests (
	run_id TEXT NOT NULL,
	kind   TEXT NOT NULL,
	by     TEXT NOT NULL,
	PRIMARY KEY (run_id, kind)
) STRICT;
`,
}

// migrate brings the schema up to date in one immediate transaction, so two
// processes opening a new file at once cannot both create it, and returns
// the migrations it applied ("embedded schema N", N the version reached).
func migrate(ctx context.Context, db *sql.DB) ([]string, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return nil, err
	}
	if v > len(migrations) {
		return nil, contracts.Errorf(contracts.CodeCheckpointFormat,
			"store schema version %d is newer than this build knows (%d)", v, len(migrations)).With("schema_version", v)
	}
	if v == len(migrations) {
		return nil, nil // up to date: no write, so no sync, at every start
	}
	var applied []string
	for ; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return nil, fmt.Errorf("schema migration %d: %w", v+1, err)
		}
		applied = append(applied, fmt.Sprintf("embedded schema %d", v+1))
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		return nil, err
	}
	return applied, tx.Commit()
}
