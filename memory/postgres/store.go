package postgres

import (
	"bytes"
	"context"
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
	sizes  memory.TailSizes
}

var (
	_ memory.Checkpointer = (*Store)(nil)
	_ memory.Leaser       = (*Store)(nil)
	_ memory.Importer     = (*Store)(nil)
	_ memory.LeaseSaver   = (*Store)(nil)
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
	cfg.PrepareConn = alive
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
	have, err := s.schemaVersion(ctx, s.pool)
	if err != nil {
		return memory.StoreError("read schema version", err)
	}
	if err := checkVersion(have, len(all)); err != nil {
		return err
	}
	if have < len(all) {
		return behind(have, len(all), "run `ordo migrate`")
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

// storeError codes a database failure.
func storeError(op string, run *contracts.Run, err error) error {
	if c := pgCode(err); c == "22P05" || c == "22021" {
		return nulRefused(run, err)
	}
	return memory.StoreError(op, err)
}

// nulRefused is the refusal of a run holding text PostgreSQL text and
// JSONB cannot (\u0000): the store keeps JSON as bytes, but the SQL views
// over the log read it as JSONB, so such a run is the caller's bad input.
func nulRefused(run *contracts.Run, err error) error {
	return contracts.Errorf(contracts.CodeInvalidInput, "run %q holds text PostgreSQL cannot store: %w", run.ID, err).
		With("field", "run").With("run_id", run.ID)
}

// hasNUL reports whether JSON text escapes a NUL character (\u0000 with
// the backslash not itself escaped).
func hasNUL(data []byte) bool {
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(`u0000`))
		if j < 0 {
			return false
		}
		j += i
		n := 0
		for k := j - 1; k >= 0 && data[k] == '\\'; k-- {
			n++
		}
		if n%2 == 1 {
			return true
		}
		i = j + 5
	}
}

// saveNew appends the first entry of a new run: the runs row (if no run
// has the id; with lease $14 for $15 microseconds when $14 is not null),
// the whole-run entry (its head $10, the snapshot $12 and "}": the run is
// sent once, not twice, for it may hold 64 MiB) and the snapshot, in one
// statement. It returns the run's tail and snapshot bytes, or no row if
// the id is taken.
const saveNew = `WITH u AS (
	INSERT INTO runs (id, user_id, goal, status, final, seq, created_at, updated_at, tail_bytes, snap_bytes, session_id, lease_owner, lease_until)
	VALUES ($1, $2, $3, $4, $5, 1, $6, $7, 0, $11, $13, $14::text, now() + $15::bigint * interval '1 microsecond') ON CONFLICT (id) DO NOTHING
	RETURNING id
), l AS (
	INSERT INTO run_log (run_id, seq, format_version, whole, entry) SELECT id, 1, $8::integer, $9::boolean, $10::bytea || $12::bytea || '\x7d'::bytea FROM u
), s AS (
	INSERT INTO run_snapshots (run_id, seq, format_version, run) SELECT id, 1, $8::integer, $12::bytea FROM u
)
SELECT 0::bigint, $11::bigint FROM u`

// saveNext appends entry $6 of a run: the runs row advances from $6 - 1
// (no row changed means a stale or skipping writer, and nothing else is
// written), the entry is inserted (a whole one, $10, as its head $11, the
// snapshot $12 and "}"), the snapshot replaced when $12 holds one, and the lease let go when $15 (the run is at rest), in one
// statement. It returns how many rows advanced (0 or 1), the
// stored sequence before the statement, and the run's new tail and
// snapshot bytes.
const saveNext = `WITH u AS (
	UPDATE runs SET user_id = $2, goal = $3, status = $4, final = $5, seq = $6, created_at = $7, updated_at = $8,
		tail_bytes = CASE WHEN $12::bytea IS NULL THEN tail_bytes + $13 ELSE 0 END,
		snap_bytes = CASE WHEN $12::bytea IS NULL THEN snap_bytes ELSE $14 END,
		lease_owner = CASE WHEN $15 THEN NULL ELSE lease_owner END, lease_until = CASE WHEN $15 THEN NULL ELSE lease_until END
	WHERE id = $1 AND seq = $6 - 1
	RETURNING id, tail_bytes, snap_bytes
), l AS (
	INSERT INTO run_log (run_id, seq, format_version, whole, entry)
	SELECT id, $6, $9::integer, $10::boolean, CASE WHEN $10 THEN $11::bytea || $12::bytea || '\x7d'::bytea ELSE $11::bytea END FROM u
), s AS (
	INSERT INTO run_snapshots (run_id, seq, format_version, run) SELECT id, $6, $9::integer, $12::bytea FROM u WHERE $12::bytea IS NOT NULL
	ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, format_version = excluded.format_version, run = excluded.run
)
SELECT tail_bytes, snap_bytes FROM u`

// Save appends run.Delta() as entry run.Seq (see memory.Checkpointer) in
// one statement, so one transaction and one round trip: advance the runs
// row from Seq-1, insert the entry, and, when memory.NeedSnapshot says so,
// replace the run's snapshot. Whether a snapshot is due depends on the
// bytes logged since the last one, which the store remembers for the runs
// this process saved or loaded (memory.TailSizes); for any other run it
// reads them first.
func (s *Store) Save(ctx context.Context, run *contracts.Run) error {
	if err := memory.CheckRun(run); err != nil {
		return err
	}
	return s.save(ctx, run, nil, nil)
}

// SaveLeased implements memory.LeaseSaver: the new run's row is inserted
// with owner's lease, on the database's clock.
func (s *Store) SaveLeased(ctx context.Context, run *contracts.Run, owner string, ttl time.Duration) error {
	if err := memory.CheckSaveLeased(run, owner, ttl); err != nil {
		return err
	}
	return s.save(ctx, run, &owner, ttl.Microseconds())
}

// save is Save; a new run's row gets owner's lease for ttl microseconds
// (nil: none).
func (s *Store) save(ctx context.Context, run *contracts.Run, owner *string, ttl any) error {
	if run.Seq < 1 {
		return s.conflict(ctx, run)
	}
	e, err := memory.NewEntry(run)
	if err != nil {
		return err
	}
	if !e.Whole {
		// A new, waiting or finished run always gets a snapshot; otherwise
		// the bytes logged since the last one decide.
		due := memory.NeedSnapshot(run, 0, 1)
		if !due {
			ts, ok := s.sizes.Get(run.ID, run.Seq-1)
			if !ok {
				var stored int64
				err := s.pool.QueryRow(ctx, `SELECT seq, tail_bytes, snap_bytes FROM runs WHERE id = $1`, run.ID).Scan(&stored, &ts.Tail, &ts.Snap)
				if errors.Is(err, pgx.ErrNoRows) || (err == nil && stored != run.Seq-1) {
					return memory.SequenceConflict(run.ID, run.Seq, stored)
				}
				if err != nil {
					return memory.StoreError("save checkpoint", err)
				}
			}
			due = ts.Due(run, e)
		}
		if due {
			if err := e.AddSnapshot(run); err != nil {
				return err
			}
		}
	}
	if hasNUL(e.Data) || hasNUL(e.Snap) {
		return nulRefused(run, errors.New("a string holds \\u0000"))
	}
	var snap any
	if e.Snap != nil {
		snap = e.Snap
	}
	var next memory.TailSize
	if run.Seq == 1 {
		err = s.pool.QueryRow(ctx, saveNew, run.ID, run.UserID, run.Goal, run.Status, run.Status.Final(),
			run.CreatedAt, run.UpdatedAt, contracts.RunFormatVersion, true, e.Head(), len(e.Snap), e.Snap, run.SessionID, owner, ttl).
			Scan(&next.Tail, &next.Snap)
	} else {
		entry := e.Data
		if e.Whole {
			entry = e.Head()
		}
		err = s.pool.QueryRow(ctx, saveNext, run.ID, run.UserID, run.Goal, run.Status, run.Status.Final(), run.Seq,
			run.CreatedAt, run.UpdatedAt, contracts.RunFormatVersion, e.Whole, entry, snap, len(e.Data), len(e.Snap), memory.AtRest(run.Status)).
			Scan(&next.Tail, &next.Snap)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return s.conflict(ctx, run)
	}
	if err != nil {
		return storeError("save checkpoint", run, err)
	}
	next.Seq = run.Seq
	s.sizes.Set(run.ID, next, run.Status.Final())
	run.MarkLogged()
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

// Load folds run id from its latest snapshot and the entries after it,
// read in one statement (one consistent view of the database). It also
// remembers the run's log figures, so that saving it next needs no read.
func (s *Store) Load(ctx context.Context, id string) (*contracts.Run, error) {
	rows, err := s.pool.Query(ctx, `SELECT 1, s.seq, s.format_version, s.run, r.tail_bytes, r.snap_bytes
			FROM run_snapshots s JOIN runs r ON r.id = s.run_id WHERE s.run_id = $1
		UNION ALL
		SELECT 0, l.seq, l.format_version, l.entry, 0, 0 FROM run_log l JOIN run_snapshots s ON s.run_id = l.run_id
		WHERE l.run_id = $1 AND l.seq > s.seq
		ORDER BY 1 DESC, 2`, id)
	if err != nil {
		return nil, memory.StoreError("load run", err)
	}
	var snap []byte
	var snapVer int
	var ts memory.TailSize
	var tail []memory.StoredEntry
	for rows.Next() {
		var isSnap int
		var e memory.StoredEntry
		var t, sb int64
		if err := rows.Scan(&isSnap, &e.Seq, &e.Version, &e.Data, &t, &sb); err != nil {
			rows.Close()
			return nil, memory.StoreError("load run", err)
		}
		if isSnap == 1 {
			snap, snapVer, ts = e.Data, e.Version, memory.TailSize{Seq: e.Seq, Tail: t, Snap: sb}
		} else {
			tail = append(tail, e)
			ts.Seq = e.Seq
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, memory.StoreError("load run", err)
	}
	if snap == nil {
		return nil, memory.NotFound(id)
	}
	run, err := memory.FoldSnapshot(snap, snapVer, tail)
	if err != nil {
		return nil, err
	}
	s.sizes.Set(id, ts, run.Status.Final())
	return run, nil
}

// Log implements memory.Checkpointer.
func (s *Store) Log(ctx context.Context, id string, after int64, limit int) ([]contracts.RunDelta, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, format_version, entry FROM run_log WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
		id, after, lim)
	if err != nil {
		return nil, memory.StoreError("read run log", err)
	}
	stored, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (memory.StoredEntry, error) {
		var e memory.StoredEntry
		return e, row.Scan(&e.Seq, &e.Version, &e.Data)
	})
	if err != nil {
		return nil, memory.StoreError("read run log", err)
	}
	return memory.LogOf(id, stored, func() memory.Row {
		return s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)`, id)
	})
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
	if f.SessionID != "" {
		add("session_id = $%d", f.SessionID)
	}
	if f.InSession {
		where = append(where, "session_id <> ''")
	}
	if !f.UpdatedAfter.IsZero() {
		add("updated_at > $%d", f.UpdatedAfter)
	}
	if !f.UpdatedBefore.IsZero() {
		args = append(args, f.UpdatedBefore, f.BeforeID)
		where = append(where, fmt.Sprintf("(updated_at, id) < ($%d, $%d)", len(args)-1, len(args)))
	}
	q := `SELECT id, user_id, session_id, goal, status, seq, created_at, updated_at FROM runs`
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
		err := row.Scan(&r.ID, &r.UserID, &r.SessionID, &r.Goal, &r.Status, &r.Seq, &r.CreatedAt, &r.UpdatedAt)
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
// logs and snapshots (and, from before schema 0002, checkpoints), in one
// statement.
func (s *Store) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `WITH d AS (
			DELETE FROM runs WHERE final AND updated_at < $1 RETURNING id
		), l AS (
			DELETE FROM run_log WHERE run_id IN (SELECT id FROM d)
		), s AS (
			DELETE FROM run_snapshots WHERE run_id IN (SELECT id FROM d)
		)
		SELECT count(*) FROM d`, olderThan).Scan(&n)
	if err != nil {
		return 0, memory.StoreError("prune runs", err)
	}
	return n, nil
}

// Delete implements memory.Checkpointer in one transaction that locks the
// runs' rows first, so no server takes a lease on one between the check
// and the delete. Leases are judged on the database's clock.
func (s *Store) Delete(ctx context.Context, ids []string) error {
	return memory.DeleteInTx(ids, &s.sizes, func(ids []string, refuse func(error) error) error {
		return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			type lease struct {
				holder string
				left   float64 // seconds; <= 0 when expired or none
			}
			rows, err := tx.Query(ctx, `SELECT id, COALESCE(lease_owner, ''), COALESCE(EXTRACT(EPOCH FROM lease_until - now()), 0)::float8
				FROM runs WHERE id = ANY($1) FOR UPDATE`, ids)
			if err != nil {
				return err
			}
			found := map[string]lease{}
			var id string
			var l lease
			if _, err := pgx.ForEachRow(rows, []any{&id, &l.holder, &l.left}, func() error {
				found[id] = l
				return nil
			}); err != nil {
				return err
			}
			for _, id := range ids {
				l, ok := found[id]
				switch {
				case !ok:
					return refuse(memory.NotFound(id))
				case l.holder != "" && l.left > 0:
					return refuse(memory.DeleteHeld(id, l.holder, time.Duration(l.left*float64(time.Second))))
				}
			}
			_, err = tx.Exec(ctx, `WITH l AS (DELETE FROM run_log WHERE run_id = ANY($1)),
				sn AS (DELETE FROM run_snapshots WHERE run_id = ANY($1))
				DELETE FROM runs WHERE id = ANY($1)`, ids)
			return err
		})
	})
}

// Compact implements memory.Checkpointer in one statement: the log of each
// finished run last updated before olderThan, if it holds more than one
// entry, becomes one whole-run entry at the run's last sequence, built
// from its snapshot (a finished run's snapshot is at that sequence).
func (s *Store) Compact(ctx context.Context, olderThan time.Time) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `WITH c AS (
			SELECT r.id, r.seq, r.updated_at, sn.format_version, sn.run
			FROM runs r JOIN run_snapshots sn ON sn.run_id = r.id AND sn.seq = r.seq
			WHERE r.final AND r.updated_at < $1 AND EXISTS (SELECT 1 FROM run_log l WHERE l.run_id = r.id AND l.seq < r.seq)
			FOR UPDATE OF r
		), d AS (
			DELETE FROM run_log l USING c WHERE l.run_id = c.id AND l.seq < c.seq
		), u AS (
			UPDATE run_log l SET whole = true, format_version = c.format_version,
				entry = convert_to('{"seq":' || c.seq || ',"updated_at":' || to_json(c.updated_at)::text
					|| ',"run":' || convert_from(c.run, 'UTF8') || '}', 'UTF8')
			FROM c WHERE l.run_id = c.id AND l.seq = c.seq
		)
		SELECT count(*) FROM c`, olderThan).Scan(&n)
	if err != nil {
		return 0, memory.StoreError("compact runs", err)
	}
	return n, nil
}

// Import implements memory.Importer: the checkpoint becomes the run's
// snapshot and a whole-run entry at its sequence, both kept in the format
// it was written in (and upgraded on load).
func (s *Store) Import(ctx context.Context, data []byte, version int) error {
	run, err := memory.CheckImport(data, version)
	if err != nil {
		return err
	}
	entry, err := memory.WholeEntry(data, run.Seq, run.UpdatedAt)
	if err != nil {
		return err
	}
	if hasNUL(entry) {
		return nulRefused(run, errors.New("a string holds \\u0000"))
	}
	var won int
	err = s.pool.QueryRow(ctx, `WITH u AS (
			INSERT INTO runs (id, user_id, goal, status, final, seq, created_at, updated_at, tail_bytes, snap_bytes, session_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $11, $13) ON CONFLICT (id) DO NOTHING
			RETURNING id
		), l AS (
			INSERT INTO run_log (run_id, seq, format_version, whole, entry) SELECT id, $6, $9::integer, true, $10::bytea FROM u
		), s AS (
			INSERT INTO run_snapshots (run_id, seq, format_version, run) SELECT id, $6, $9::integer, $12::bytea FROM u
		)
		SELECT count(*) FROM u`,
		run.ID, run.UserID, run.Goal, run.Status, run.Status.Final(), run.Seq, run.CreatedAt, run.UpdatedAt,
		version, entry, len(data), slices.Clip(data), run.SessionID).Scan(&won)
	if err != nil {
		return storeError("import checkpoint", run, err)
	}
	if won == 0 {
		return s.conflict(ctx, run)
	}
	return nil
}
