package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// Store is a run store in PostgreSQL, safe for concurrent use by many
// goroutines and many processes.
type Store struct {
	pool   *pgxpool.Pool
	schema string
}

var (
	_ memory.Checkpointer = (*Store)(nil)
	_ memory.Leaser       = (*Store)(nil)
	_ memory.Importer     = (*Store)(nil)
)

type options struct {
	schema      string
	autoMigrate bool
	maxConns    int32
}

// Option configures Open.
type Option func(*options)

// WithSchema keeps Ordo's tables in schema (created if missing) instead of
// the connection's default search_path.
func WithSchema(schema string) Option { return func(o *options) { o.schema = schema } }

// WithAutoMigrate sets whether Open applies pending migrations (default
// true). With false, Open refuses a database that lacks migrations; run
// `ordo migrate` (Store.Migrate) first.
func WithAutoMigrate(on bool) Option { return func(o *options) { o.autoMigrate = on } }

// WithMaxConns bounds the connection pool (default: pgxpool's, or the DSN's
// pool_max_conns).
func WithMaxConns(n int32) Option { return func(o *options) { o.maxConns = n } }

// Open connects to the database at dsn (a postgres:// URL or key=value
// string) and, unless told otherwise, brings its schema up to date.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	s, o, err := connect(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	if err := s.ready(ctx, o.autoMigrate); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// Migrate applies the migrations the database at dsn lacks and returns
// their names; `ordo migrate` calls it. Safe to run from several processes.
func Migrate(ctx context.Context, dsn string, opts ...Option) ([]string, error) {
	s, _, err := connect(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Migrate(ctx)
}

func connect(ctx context.Context, dsn string, opts []Option) (*Store, options, error) {
	o := options{autoMigrate: true}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// The parse error may quote the DSN, password included: do not wrap it.
		return nil, o, contracts.Errorf(contracts.CodeInvalidConfig, "postgres DSN does not parse").With("field", "dsn")
	}
	if o.maxConns < 0 {
		return nil, o, contracts.Errorf(contracts.CodeInvalidConfig, "max conns %d is negative", o.maxConns).With("field", "max_conns")
	}
	if o.maxConns > 0 {
		cfg.MaxConns = o.maxConns
	}
	if o.schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{o.schema}.Sanitize()
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, o, memory.StoreError("connect to postgres", err)
	}
	return &Store{pool: pool, schema: o.schema}, o, nil
}

// ready migrates, or checks that nothing is left to migrate.
func (s *Store) ready(ctx context.Context, migrate bool) error {
	if migrate {
		_, err := s.Migrate(ctx)
		return err
	}
	all, err := loadMigrations()
	if err != nil {
		return contracts.Errorf(contracts.CodeInternal, "embedded migrations: %w", err)
	}
	have, err := s.schemaVersion(ctx)
	if err != nil {
		return memory.StoreError("read schema version", err)
	}
	if have < len(all) {
		return contracts.Errorf(contracts.CodeStore, "database schema is at version %d, this build needs %d: run `ordo migrate`", have, len(all)).
			With("schema_version", have).With("want", len(all))
	}
	return nil
}

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Pool is the connection pool, for callers that share the database.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// storeError codes a database failure. JSON that Postgres cannot hold
// (JSONB refuses \u0000 in strings) is the caller's input, not a fault.
func storeError(op string, run *contracts.Run, err error) error {
	if c := pgCode(err); c == "22P05" || c == "22021" {
		return contracts.Errorf(contracts.CodeInvalidInput, "run %q holds text PostgreSQL cannot store: %w", run.ID, err).
			With("field", "run").With("run_id", run.ID)
	}
	return memory.StoreError(op, err)
}

// Save writes checkpoint run.Seq in one transaction: advance runs.seq from
// Seq-1 (no row changed means a stale or skipping writer), keep the
// checkpoint, and append the step and decision records not yet stored.
func (s *Store) Save(ctx context.Context, run *contracts.Run) error {
	if err := memory.CheckRun(run); err != nil {
		return err
	}
	data, err := memory.EncodeRun(run)
	if err != nil {
		return err
	}
	if run.Seq < 1 {
		return s.conflict(ctx, run)
	}
	won := false
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var steps, decisions int
		var err error
		if run.Seq == 1 {
			err = tx.QueryRow(ctx, `INSERT INTO runs (id, user_id, goal, status, final, seq, format_version, created_at, updated_at,
				step_count, decision_count, run) VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $9, $10, $11)
				ON CONFLICT (id) DO NOTHING RETURNING 0, 0`,
				run.ID, run.UserID, run.Goal, run.Status, run.Status.Final(), contracts.RunFormatVersion,
				run.CreatedAt, run.UpdatedAt, len(run.Steps), len(run.Decisions), data).Scan(&steps, &decisions)
		} else {
			// o is the row before this update: the counts of records already stored.
			err = tx.QueryRow(ctx, `UPDATE runs r SET user_id = $2, goal = $3, status = $4, final = $5, seq = $6,
				format_version = $7, created_at = $8, updated_at = $9, step_count = greatest(o.step_count, $10),
				decision_count = greatest(o.decision_count, $11), run = $12
				FROM runs o WHERE r.id = $1 AND o.id = r.id AND r.seq = $6 - 1
				RETURNING o.step_count, o.decision_count`,
				run.ID, run.UserID, run.Goal, run.Status, run.Status.Final(), run.Seq, contracts.RunFormatVersion,
				run.CreatedAt, run.UpdatedAt, len(run.Steps), len(run.Decisions), data).Scan(&steps, &decisions)
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // refused; explained below, outside the transaction
		}
		if err != nil {
			return err
		}
		won = true
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO checkpoints (run_id, seq, format_version, run) VALUES ($1, $2, $3, $4)`,
			run.ID, run.Seq, contracts.RunFormatVersion, data)
		if err := queueRecords(b, run, steps, decisions); err != nil {
			return err
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return storeError("save checkpoint", run, err)
	}
	if !won {
		return s.conflict(ctx, run)
	}
	return nil
}

// queueRecords appends the step and decision records past the stored counts.
func queueRecords(b *pgx.Batch, run *contracts.Run, steps, decisions int) error {
	if steps < len(run.Steps) {
		recs, err := json.Marshal(run.Steps[steps:])
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO step_records (run_id, idx, seq, action_id, tool, attempt, status, record)
			SELECT $1, $2 + r.ord - 1, $3, r.rec->>'action_id', r.rec->>'tool', coalesce((r.rec->>'attempt')::int, 0),
				r.rec->>'status', r.rec
			FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS r(rec, ord)`, run.ID, steps, run.Seq, recs)
	}
	if decisions < len(run.Decisions) {
		recs, err := json.Marshal(run.Decisions[decisions:])
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO decisions (run_id, idx, seq, interrupt, decision, decided_by, decided_at, record)
			SELECT $1, $2 + r.ord - 1, $3, r.rec#>>'{interrupt,kind}', r.rec#>>'{decision,decision}',
				coalesce(r.rec#>>'{decision,by}', ''), (r.rec->>'at')::timestamptz, r.rec
			FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS r(rec, ord)`, run.ID, decisions, run.Seq, recs)
	}
	return nil
}

// conflict builds the refusal for a write that was not the next sequence.
func (s *Store) conflict(ctx context.Context, run *contracts.Run) error {
	var stored int64
	err := s.pool.QueryRow(ctx, `SELECT seq FROM runs WHERE id = $1`, run.ID).Scan(&stored)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return memory.StoreError("save checkpoint", err)
	}
	return memory.SequenceConflict(run.ID, run.Seq, stored)
}

// Load returns the latest checkpoint of run id, upgraded to the current format.
func (s *Store) Load(ctx context.Context, id string) (*contracts.Run, error) {
	var version int
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT format_version, run FROM runs WHERE id = $1`, id).Scan(&version, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, memory.NotFound(id)
	}
	if err != nil {
		return nil, memory.StoreError("load checkpoint", err)
	}
	return memory.DecodeRun(data, version)
}

// List returns summaries matching f, newest first.
func (s *Store) List(ctx context.Context, f memory.Filter) ([]memory.RunSummary, error) {
	if err := memory.CheckFilter(f); err != nil {
		return nil, err
	}
	var where []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if len(f.Status) > 0 {
		st := make([]string, len(f.Status))
		for i, s := range f.Status {
			st[i] = string(s)
		}
		add("status = ANY($%d)", st)
	}
	if f.UserID != "" {
		add("user_id = $%d", f.UserID)
	}
	if !f.UpdatedAfter.IsZero() {
		add("updated_at > $%d", f.UpdatedAfter)
	}
	if !f.UpdatedBefore.IsZero() {
		add("updated_at < $%d", f.UpdatedBefore)
	}
	q := `SELECT id, user_id, goal, status, seq, created_at, updated_at FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY updated_at DESC, id DESC"
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(" LIMIT $%d", len(args))
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, memory.StoreError("list runs", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (memory.RunSummary, error) {
		var r memory.RunSummary
		err := row.Scan(&r.ID, &r.UserID, &r.Goal, &r.Status, &r.Seq, &r.CreatedAt, &r.UpdatedAt)
		r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
		return r, err
	})
	if err != nil {
		return nil, memory.StoreError("list runs", err)
	}
	if out == nil {
		out = []memory.RunSummary{}
	}
	return out, nil
}

// Prune deletes finished runs last updated before olderThan, with their
// checkpoints, step records and decisions.
func (s *Store) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM runs WHERE final AND updated_at < $1`, olderThan)
	if err != nil {
		return 0, memory.StoreError("prune runs", err)
	}
	return int(tag.RowsAffected()), nil
}

// Import implements memory.Importer: the checkpoint is kept in the format
// it was written in and upgraded on load; its step and decision records are
// stored in the current format.
func (s *Store) Import(ctx context.Context, data []byte, version int) error {
	run, err := memory.CheckImport(data, version)
	if err != nil {
		return err
	}
	won := false
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO runs (id, user_id, goal, status, final, seq, format_version, created_at, updated_at,
			step_count, decision_count, run) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (id) DO NOTHING`,
			run.ID, run.UserID, run.Goal, run.Status, run.Status.Final(), run.Seq, version,
			run.CreatedAt, run.UpdatedAt, len(run.Steps), len(run.Decisions), slices.Clip(data))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		won = true
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO checkpoints (run_id, seq, format_version, run) VALUES ($1, $2, $3, $4)`, run.ID, run.Seq, version, data)
		if err := queueRecords(b, run, 0, 0); err != nil {
			return err
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return storeError("import checkpoint", run, err)
	}
	if !won {
		return s.conflict(ctx, run)
	}
	return nil
}
