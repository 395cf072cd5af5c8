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
// and then find nothing to do. An up-to-date database is only read, so a
// server whose role may not create tables starts; a database a newer build
// migrated is refused (CodeCheckpointFormat) and left as it is.
func (s *Store) Migrate(ctx context.Context) ([]string, error) {
	all, err := loadMigrations()
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInternal, "embedded migrations: %w", err)
	}
	have, err := s.schemaVersion(ctx, s.pool)
	if err != nil {
		return nil, memory.StoreError("read schema version", err)
	}
	if err := checkVersion(have, len(all)); err != nil || have == len(all) {
		return nil, err
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
		// Read again under the lock: another process may have migrated.
		if have, err = s.schemaVersion(ctx, tx); err != nil {
			return err
		}
		if err := checkVersion(have, len(all)); err != nil {
			return err
		}
		for _, m := range all[have:] {
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
	switch {
	case contracts.CodeOf(err) == contracts.CodeCheckpointFormat:
		return nil, err
	case pgCode(err) == "42501": // insufficient_privilege
		return nil, behind(have, len(all), "this database role may not migrate it: run `ordo migrate` as its owner").With("cause", err.Error())
	case err != nil:
		return nil, memory.StoreError("migrate", err)
	}
	return applied, nil
}

// checkVersion refuses a database a newer build migrated: this build
// does not know its tables, and writing into them could corrupt its runs.
func checkVersion(have, want int) error {
	if have > want {
		return contracts.Errorf(contracts.CodeCheckpointFormat,
			"database schema is at version %d, newer than this build knows (%d): run a build that has its migrations", have, want).
			With("schema_version", have).With("want", want)
	}
	return nil
}

// behind is the refusal of a database that lacks migrations.
func behind(have, want int, what string) *contracts.Error {
	return contracts.Errorf(contracts.CodeStore, "database schema is at version %d, this build needs %d: %s", have, want, what).
		With("schema_version", have).With("want", want)
}

// schemaVersion is the newest migration the database has, 0 for none.
func (s *Store) schemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v int
	err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	if pgCode(err) == "42P01" { // undefined_table: nothing migrated yet
		return 0, nil
	}
	return v, err
}
