package embedded

import (
	"context"
	"database/sql"

	"github.com/ordo-run/ordo/memory"
)

var _ memory.Requester = (*Store)(nil)

// Requests live in run_requests (schema version 4): people's requests to a
// run's driver (pause, cancel), deleted with the run.

// Request implements memory.Requester.
func (s *Store) Request(ctx context.Context, runID, kind, by string) error {
	err := s.groupWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO run_requests (run_id, kind, by) VALUES (?, ?, ?)
			ON CONFLICT (run_id, kind) DO UPDATE SET by = excluded.by`, runID, kind, by)
		return err
	})
	if err != nil {
		return memory.StoreError("record request", err)
	}
	return nil
}

// Requests implements memory.Requester.
func (s *Store) Requests(ctx context.Context, runID string) (map[string]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT kind, by FROM run_requests WHERE run_id = ?`, runID)
	if err != nil {
		return nil, memory.StoreError("read requests", err)
	}
	defer rows.Close()
	return memory.ScanRequests(rows)
}

// Withdraw implements memory.Requester.
func (s *Store) Withdraw(ctx context.Context, runID, kind string) error {
	err := s.groupWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM run_requests WHERE run_id = ? AND kind = ?`, runID, kind)
		return err
	})
	if err != nil {
		return memory.StoreError("withdraw request", err)
	}
	return nil
}
