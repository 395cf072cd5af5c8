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
}

// migrate brings the schema up to date in one immediate transaction, so two
// processes opening a new file at once cannot both create it.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return contracts.Errorf(contracts.CodeCheckpointFormat,
			"store schema version %d is newer than this build knows (%d)", v, len(migrations)).With("schema_version", v)
	}
	for ; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("schema migration %d: %w", v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		return err
	}
	return tx.Commit()
}
