package embedded

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/ordo-run/ordo/memory"
)

// Leases use this process's clock; processes sharing a file share a machine.

// Acquire implements memory.Leaser.
func (s *Store) Acquire(ctx context.Context, runID, owner string, ttl time.Duration) error {
	if err := memory.CheckLease(runID, owner, ttl, true); err != nil {
		return err
	}
	now := time.Now()
	return s.leaseUpdate(ctx, "acquire lease", runID, owner, s.wr.acquire,
		owner, now.Add(ttl).UnixNano(), runID, owner, now.UnixNano())
}

// Renew implements memory.Leaser.
func (s *Store) Renew(ctx context.Context, runID, owner string, ttl time.Duration) error {
	if err := memory.CheckLease(runID, owner, ttl, true); err != nil {
		return err
	}
	now := time.Now()
	return s.leaseUpdate(ctx, "renew lease", runID, owner, s.wr.renew,
		now.Add(ttl).UnixNano(), runID, owner, now.UnixNano())
}

// leaseUpdate runs a lease statement (prepared on the writer) and
// explains a refusal. Lease changes are group-committed with the Saves
// (commit.go).
func (s *Store) leaseUpdate(ctx context.Context, op, runID, owner string, st *sql.Stmt, args ...any) error {
	var n int64
	err := s.groupWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return memory.StoreError(op, err)
	}
	if n == 1 {
		return nil
	}
	var holder sql.NullString
	var until sql.NullInt64
	err = s.r.QueryRowContext(ctx, `SELECT lease_owner, lease_until FROM runs WHERE id = ?`, runID).Scan(&holder, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.NotFound(runID)
	}
	if err != nil {
		return memory.StoreError(op, err)
	}
	return memory.LeaseHeld(runID, owner, holder.String, time.Until(time.Unix(0, until.Int64)))
}

// Release implements memory.Leaser.
func (s *Store) Release(ctx context.Context, runID, owner string) error {
	if err := memory.CheckLease(runID, owner, time.Nanosecond, true); err != nil {
		return err
	}
	err := s.groupWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.StmtContext(ctx, s.wr.release).ExecContext(ctx, runID, owner)
		return err
	})
	if err != nil {
		return memory.StoreError("release lease", err)
	}
	return nil
}

// ClaimExpired implements memory.Leaser; oldest-updated runs are claimed
// first. The select and the update share one immediate transaction (the
// committer's), so two processes never claim the same run.
func (s *Store) ClaimExpired(ctx context.Context, owner string, ttl time.Duration, limit int) ([]string, error) {
	if err := memory.CheckClaim(owner, ttl, limit); err != nil {
		return nil, err
	}
	var ids []string
	err := s.groupWrite(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		ids, err = claim(ctx, tx, owner, ttl, limit)
		return err
	})
	if err != nil {
		return nil, memory.StoreError("claim expired runs", err)
	}
	return ids, nil
}

func claim(ctx context.Context, tx *sql.Tx, owner string, ttl time.Duration, limit int) ([]string, error) {
	now := time.Now()
	rows, err := tx.QueryContext(ctx, `SELECT id FROM runs WHERE final = 0 AND lease_owner IS NOT NULL AND lease_until <= ?
		ORDER BY updated_at, id LIMIT ?`, now.UnixNano(), limit)
	if err != nil {
		return nil, err
	}
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET lease_owner = ?, lease_until = ? WHERE id = ?`,
			owner, now.Add(ttl).UnixNano(), id); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
