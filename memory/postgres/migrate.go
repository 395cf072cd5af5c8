package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one numbered SQL file of migrations/.
type migration struct {
	version int
	name    string
	sql     string
}

// migrationLock is the advisory lock key every Ordo process takes to
// migrate, so concurrent start-ups apply each migration once.
const migrationLock int64 = 0x6f72646f6d696772 // "ordomigr"

// loadMigrations reads migrations/NNNN_name.sql, numbered 1, 2, 3 ...
func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []migration
	for i, path := range names {
		base := strings.TrimPrefix(path, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			return nil, fmt.Errorf("migration %s: want number %04d", base, i+1)
		}
		body, err := migrationFS.ReadFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(body)})
	}
	return out, nil
}

// Migrate applies the migrations the database lacks, in one transaction
// under an advisory lock, and returns the names of those it applied. Several
// processes may call it at once: the first applies, the others wait for it
// and then find nothing to do.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	all, err := loadMigrations()
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "embedded migrations: %w", err)
	}
	var applied []string
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		if s.schema != "" {
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{s.schema}.Sanitize()); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
			return err
		}
		for _, m := range all[min(have, len(all)):] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return err
			}
			applied = append(applied, m.name)
		}
		return nil
	})
	if err != nil {
		return nil, memory.StoreError("migrate", err)
	}
	return applied, nil
}

// schemaVersion is the newest migration the database has, 0 for none.
func (s *Store) schemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	if pgCode(err) == "42P01" { // undefined_table: nothing migrated yet
		return 0, nil
	}
	return v, err
}
