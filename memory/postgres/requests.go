package postgres

import (
	"context"

	"github.com/ordo-run/ordo/memory"
)

var _ memory.Requester = (*Store)(nil)

// Requests live in run_requests (migration 0004): people's requests to a
// run's driver (pause, cancel); deleting a run deletes its requests.

// Request implements memory.Requester.
func (s *Store) Request(ctx context.Context, runID, kind, by string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO run_requests (run_id, kind, by_user) VALUES ($1, $2, $3)
		ON CONFLICT (run_id, kind) DO UPDATE SET by_user = excluded.by_user`, runID, kind, by)
	if err != nil {
		return memory.StoreError("record request", err)
	}
	return nil
}

// Requests implements memory.Requester.
func (s *Store) Requests(ctx context.Context, runID string) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT kind, by_user FROM run_requests WHERE run_id = $1`, runID)
	if err != nil {
		return nil, memory.StoreError("read requests", err)
	}
	defer rows.Close()
	return memory.ScanRequests(rows)
}

// Withdraw implements memory.Requester.
func (s *Store) Withdraw(ctx context.Context, runID, kind string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM run_requests WHERE run_id = $1 AND kind = $2`, runID, kind)
	if err != nil {
		return memory.StoreError("withdraw request", err)
	}
	return nil
}
