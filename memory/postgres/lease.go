package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/ordo-run/ordo/memory"
)

// Leases run on the database's clock (now()), so servers with skewed
// clocks still agree on when a lease expires. ttl travels as microseconds.

// Acquire implements memory.Leaser.
func (s *Store) Acquire(ctx context.Context, runID, owner string, ttl time.Duration) error {
	if err := memory.CheckLease(runID, owner, ttl, true); err != nil {
		return err
	}
	return s.leaseUpdate(ctx, "acquire lease", runID, owner,
		`UPDATE runs SET lease_owner = $2, lease_until = now() + $3 * interval '1 microsecond'
		 WHERE id = $1 AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until <= now())`,
		runID, owner, ttl.Microseconds())
}

// Renew implements memory.Leaser.
func (s *Store) Renew(ctx context.Context, runID, owner string, ttl time.Duration) error {
	if err := memory.CheckLease(runID, owner, ttl, true); err != nil {
		return err
	}
	return s.leaseUpdate(ctx, "renew lease", runID, owner,
		`UPDATE runs SET lease_until = now() + $3 * interval '1 microsecond'
		 WHERE id = $1 AND lease_owner = $2 AND lease_until > now()`,
		runID, owner, ttl.Microseconds())
}

func (s *Store) leaseUpdate(ctx context.Context, op, runID, owner, q string, args ...any) error {
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return memory.StoreError(op, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var holder *string
	var left *float64 // seconds, on the database's clock
	err = s.pool.QueryRow(ctx, `SELECT lease_owner, EXTRACT(EPOCH FROM lease_until - now())::float8 FROM runs WHERE id = $1`, runID).
		Scan(&holder, &left)
	if errors.Is(err, pgx.ErrNoRows) {
		return memory.NotFound(runID)
	}
	if err != nil {
		return memory.StoreError(op, err)
	}
	h, d := "", time.Duration(0)
	if holder != nil {
		h = *holder
	}
	if left != nil {
		d = time.Duration(*left * float64(time.Second))
	}
	return memory.LeaseHeld(runID, owner, h, d)
}

// Release implements memory.Leaser.
func (s *Store) Release(ctx context.Context, runID, owner string) error {
	if err := memory.CheckLease(runID, owner, time.Nanosecond, true); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2`, runID, owner)
	if err != nil {
		return memory.StoreError("release lease", err)
	}
	return nil
}

// ClaimExpired implements memory.Leaser with SELECT ... FOR UPDATE SKIP
// LOCKED, so servers claiming at once split the expired runs between them
// instead of queueing on the same rows. Oldest-updated runs come first.
func (s *Store) ClaimExpired(ctx context.Context, owner string, ttl time.Duration, limit int) ([]string, error) {
	if err := memory.CheckClaim(owner, ttl, limit); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `UPDATE runs SET lease_owner = $1, lease_until = now() + $2 * interval '1 microsecond'
		WHERE id IN (SELECT id FROM runs WHERE NOT final AND lease_owner IS NOT NULL AND lease_until <= now()
			ORDER BY updated_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING id, updated_at`, owner, ttl.Microseconds(), limit)
	if err != nil {
		return nil, memory.StoreError("claim expired runs", err)
	}
	type claimed struct {
		id      string
		updated time.Time
	}
	got, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (claimed, error) {
		var c claimed
		return c, row.Scan(&c.id, &c.updated)
	})
	if err != nil {
		return nil, memory.StoreError("claim expired runs", err)
	}
	slices.SortFunc(got, func(a, b claimed) int {
		if c := a.updated.Compare(b.updated); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	ids := make([]string, len(got))
	for i, c := range got {
		ids[i] = c.id
	}
	return ids, nil
}
