package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Store is a run store in one SQLite file. It is safe for concurrent use,
// and several processes may open the same file (leases and sequence checks
// are SQL statements, so they hold across processes).
type Store struct {
	w *sql.DB // one connection: SQLite admits one writer, so writers queue in Go rather than spin on SQLITE_BUSY
	r *sql.DB // readers: WAL lets them run beside the writer
}

var (
	_ memory.Checkpointer = (*Store)(nil)
	_ memory.Leaser       = (*Store)(nil)
	_ memory.Importer     = (*Store)(nil)
)

// busyTimeout bounds how long a statement waits for another process's
// write lock before failing.
const busyTimeout = 10 * time.Second

// Open opens (creating if needed) the store file at path and brings its
// schema up to date. The parent directory is created private to the user.
//
// The file runs in WAL mode with synchronous=FULL: every acknowledged
// checkpoint survives a crash of the process and of the machine. NORMAL
// would survive a process crash too but could lose the last checkpoints on
// power loss, and a lost checkpoint means an already-made tool call runs
// again; docs/stores.md has the measured cost of FULL.
func Open(path string) (*Store, error) { return open(path, "FULL") }

func open(path, synchronous string) (*Store, error) {
	if path == "" {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "store path is empty").With("field", "path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "store path %q: %w", path, err).With("field", "path")
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, memory.StoreError("create store directory", err)
	}
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(abs)
	common := fmt.Sprintf("_busy_timeout=%d&_foreign_keys=1", busyTimeout.Milliseconds())
	w, err := sql.Open("sqlite", uri+"?"+common+"&_journal_mode=WAL&_synchronous="+synchronous+"&_txlock=immediate")
	if err != nil {
		return nil, memory.StoreError("open store", err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	ctx := context.Background()
	if err := migrate(ctx, w); err != nil {
		w.Close()
		if contracts.CodeOf(err) == contracts.CodeCheckpointFormat {
			return nil, err
		}
		return nil, memory.StoreError(fmt.Sprintf("open store %s", abs), err)
	}
	r, err := sql.Open("sqlite", uri+"?"+common+"&_query_only=1")
	if err != nil {
		w.Close()
		return nil, memory.StoreError("open store", err)
	}
	r.SetMaxOpenConns(4)
	return &Store{w: w, r: r}, nil
}

// Close closes the file.
func (s *Store) Close() error { return errors.Join(s.r.Close(), s.w.Close()) }

// timeFormat is fixed-width so that text order is time order.
const timeFormat = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeFormat) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeFormat, s) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

const insertRun = `INSERT INTO runs (id, user_id, goal, status, final, seq, format_version, created_at, updated_at, data)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`

// Save stores run as checkpoint run.Seq in one statement, which SQLite
// makes atomic: the previous checkpoint stays whole until this one commits.
func (s *Store) Save(ctx context.Context, run *contracts.Run) error {
	if err := memory.CheckRun(run); err != nil {
		return err
	}
	data, err := memory.EncodeRun(run)
	if err != nil {
		return err
	}
	var res sql.Result
	switch {
	case run.Seq == 1:
		res, err = s.w.ExecContext(ctx, insertRun, run.ID, run.UserID, run.Goal, string(run.Status), boolInt(run.Status.Final()),
			run.Seq, contracts.RunFormatVersion, fmtTime(run.CreatedAt), fmtTime(run.UpdatedAt), data)
	case run.Seq > 1:
		res, err = s.w.ExecContext(ctx, `UPDATE runs SET user_id = ?, goal = ?, status = ?, final = ?, seq = ?,
			format_version = ?, created_at = ?, updated_at = ?, data = ? WHERE id = ? AND seq = ?`,
			run.UserID, run.Goal, string(run.Status), boolInt(run.Status.Final()), run.Seq,
			contracts.RunFormatVersion, fmtTime(run.CreatedAt), fmtTime(run.UpdatedAt), data, run.ID, run.Seq-1)
	}
	if err != nil {
		return memory.StoreError("save checkpoint", err)
	}
	if res != nil {
		if n, err := res.RowsAffected(); err != nil {
			return memory.StoreError("save checkpoint", err)
		} else if n == 1 {
			return nil
		}
	}
	return s.conflict(ctx, run)
}

// conflict builds the refusal for a write that was not the next sequence.
func (s *Store) conflict(ctx context.Context, run *contracts.Run) error {
	var stored int64
	err := s.r.QueryRowContext(ctx, `SELECT seq FROM runs WHERE id = ?`, run.ID).Scan(&stored)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return memory.StoreError("save checkpoint", err)
	}
	return memory.SequenceConflict(run.ID, run.Seq, stored)
}

// Load returns the latest checkpoint of run id, upgraded to the current format.
func (s *Store) Load(ctx context.Context, id string) (*contracts.Run, error) {
	var version int
	var data []byte
	err := s.r.QueryRowContext(ctx, `SELECT format_version, data FROM runs WHERE id = ?`, id).Scan(&version, &data)
	if errors.Is(err, sql.ErrNoRows) {
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
	if len(f.Status) > 0 {
		where = append(where, "status IN (?"+strings.Repeat(", ?", len(f.Status)-1)+")")
		for _, st := range f.Status {
			args = append(args, string(st))
		}
	}
	if f.UserID != "" {
		where, args = append(where, "user_id = ?"), append(args, f.UserID)
	}
	if !f.UpdatedAfter.IsZero() {
		where, args = append(where, "updated_at > ?"), append(args, fmtTime(f.UpdatedAfter))
	}
	if !f.UpdatedBefore.IsZero() {
		where, args = append(where, "updated_at < ?"), append(args, fmtTime(f.UpdatedBefore))
	}
	q := `SELECT id, user_id, goal, status, seq, created_at, updated_at FROM runs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY updated_at DESC, id DESC"
	if f.Limit > 0 {
		q, args = q+" LIMIT ?", append(args, f.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, memory.StoreError("list runs", err)
	}
	defer rows.Close()
	out := []memory.RunSummary{}
	for rows.Next() {
		var r memory.RunSummary
		var created, updated string
		if err := rows.Scan(&r.ID, &r.UserID, &r.Goal, &r.Status, &r.Seq, &created, &updated); err != nil {
			return nil, memory.StoreError("list runs", err)
		}
		if r.CreatedAt, err = parseTime(created); err == nil {
			r.UpdatedAt, err = parseTime(updated)
		}
		if err != nil {
			return nil, memory.StoreError("list runs", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, memory.StoreError("list runs", err)
	}
	return out, nil
}

// Prune deletes finished runs last updated before olderThan.
func (s *Store) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM runs WHERE final = 1 AND updated_at < ?`, fmtTime(olderThan))
	if err != nil {
		return 0, memory.StoreError("prune runs", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, memory.StoreError("prune runs", err)
	}
	return int(n), nil
}

// Import implements memory.Importer.
func (s *Store) Import(ctx context.Context, data []byte, version int) error {
	run, err := memory.CheckImport(data, version)
	if err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, insertRun, run.ID, run.UserID, run.Goal, string(run.Status), boolInt(run.Status.Final()),
		run.Seq, version, fmtTime(run.CreatedAt), fmtTime(run.UpdatedAt), slices.Clone(data))
	if err != nil {
		return memory.StoreError("import checkpoint", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return memory.StoreError("import checkpoint", err)
	} else if n == 0 {
		return s.conflict(ctx, run)
	}
	return nil
}
