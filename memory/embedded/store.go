package embedded

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
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
	w     *sql.DB   // one connection: SQLite admits one writer, so writers queue in Go rather than spin on SQLITE_BUSY
	r     *sql.DB   // readers: WAL lets them run beside the writer
	load  *sql.Stmt // Load's query, prepared once on the readers (parsing it cost more than running it)
	wr    writer    // the group committer of Saves (commit.go)
	sizes memory.TailSizes
	// fullSync: the file runs synchronous=FULL, so a batch of lease
	// changes alone may skip its sync (see unsynced).
	fullSync bool
	migrated []string // the schema migrations Open applied
	exposed  error    // why a file stays readable to others (private)
}

var (
	_ memory.Checkpointer = (*Store)(nil)
	_ memory.Leaser       = (*Store)(nil)
	_ memory.Importer     = (*Store)(nil)
	_ memory.LeaseSaver   = (*Store)(nil)
)

// busyTimeout bounds how long a statement waits for another process's
// write lock before failing.
const busyTimeout = 10 * time.Second

// Open opens (creating if needed) the store file at path and brings its
// schema up to date. The parent directory and a new file are created
// private to the user.
//
// The file runs in WAL mode with synchronous=FULL: every acknowledged
// Save survives a crash of the process and of the machine. NORMAL would
// survive a process crash too but could lose the last Saves on power loss,
// and a lost entry means an already-made tool call runs again. Saves are
// group-committed (commit.go), so FULL costs one sync per batch, not per
// Save; docs/stores.md has the measured figures.
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
	ctx := context.Background()
	created, isNew := create(ctx, abs)
	// A new file is the user's alone, whatever its directory: SQLite would
	// make it 0644, and its -wal and -shm take its mode. Runs hold goals,
	// tool results and people's answers. (An empty file is a new database.)
	// One an older Ordo made is made so (private).
	if f, err := os.OpenFile(abs, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
		f.Close()
	}
	exposed := private(abs)
	uri := fileURI(abs)
	common := fmt.Sprintf("_busy_timeout=%d&_foreign_keys=1", busyTimeout.Milliseconds())
	w, err := sql.Open("sqlite", uri+"?"+common+"&_journal_mode=WAL&_synchronous="+synchronous+"&_txlock=immediate")
	if err != nil {
		return nil, memory.StoreError("open store", err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	migrated, err := migrate(ctx, w)
	if isNew {
		migrated = created
	}
	if err != nil {
		w.Close()
		if contracts.CodeOf(err) == contracts.CodeCheckpointFormat {
			return nil, err
		}
		if why := cannotWrite(abs); why != nil {
			err = fmt.Errorf("%w; %w", err, why)
		}
		return nil, memory.StoreError(fmt.Sprintf("open store %s", abs), err)
	}
	r, err := sql.Open("sqlite", uri+"?"+common+"&_query_only=1")
	if err != nil {
		w.Close()
		return nil, memory.StoreError("open store", err)
	}
	r.SetMaxOpenConns(4)
	s := &Store{w: w, r: r, fullSync: synchronous == "FULL", migrated: migrated, exposed: exposed}
	if s.load, err = r.PrepareContext(ctx, loadQuery); err != nil {
		r.Close()
		w.Close()
		return nil, memory.StoreError("open store", err)
	}
	if err := s.startWriter(ctx); err != nil {
		s.load.Close()
		r.Close()
		w.Close()
		return nil, memory.StoreError("open store", err)
	}
	return s, nil
}

// fileURI is the driver's name for the file at abs.
func fileURI(abs string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(abs)
}

// create makes the store file at abs, if there is none, whole: the schema
// is written into a private temporary file beside it without syncs, the
// file is synced once and linked in under its name, so it appears complete
// or not at all (a crash leaves at most a stray temporary). Migrating an
// empty file in place cost seven syncs before the first tools/list of a
// new data dir: its switch to WAL goes through a rollback journal (four),
// then the WAL is made and committed (three). The directory entry is
// synced by SQLite (synchronous=FULL, as Open runs it) when the first
// write makes the WAL beside it, before that write is acknowledged.
// create returns the migrations applied, or
// false when abs exists, another process linked its file first, or the
// file system cannot (no hard links, full): Open then migrates in place
// and says why it could not.
func create(ctx context.Context, abs string) ([]string, bool) {
	if _, err := os.Lstat(abs); !errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	f, err := os.CreateTemp(filepath.Dir(abs), filepath.Base(abs)+".new-*")
	if err != nil {
		return nil, false
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
			os.Remove(p)
		}
	}()
	db, err := sql.Open("sqlite", fileURI(tmp)+"?_pragma=synchronous(OFF)&_journal_mode=WAL")
	if err != nil {
		return nil, false
	}
	db.SetMaxOpenConns(1)
	applied, err := migrate(ctx, db)
	if errors.Join(err, db.Close()) != nil { // closing moves the WAL into the file
		return nil, false
	}
	if f, err = os.OpenFile(tmp, os.O_RDWR, 0); err != nil {
		return nil, false
	}
	if errors.Join(f.Sync(), f.Close()) != nil || os.Link(tmp, abs) != nil {
		return nil, false
	}
	return applied, true
}

// cannotWrite says why the store file at path cannot be written, if the
// file system is why: the file may not be opened for writing, or no file
// can be written beside it (its -wal and -shm live there; the -shm needs
// 32 KiB). SQLite's own words for these ("unable to open database file",
// "attempt to write a readonly database", "disk I/O error") do not say
// which. Called only once opening failed.
func cannotWrite(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot write %s: %w", path, unwrapPath(err))
	}
	dir := filepath.Dir(path)
	probe, err := os.CreateTemp(dir, ".ordo-probe-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, unwrapPath(err))
	}
	defer os.Remove(probe.Name())
	_, err = probe.Write(make([]byte, 64<<10))
	if err = errors.Join(err, probe.Close()); err != nil {
		return fmt.Errorf("cannot write in %s: %w", dir, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops the *fs.PathError's operation and path: the message
// names the file already.
func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}

// Migrated returns the schema migrations Open applied to the file, oldest
// first ("embedded schema N"; a new file gets them all), for `ordo migrate`
// to report: opening the file is what migrates it.
func (s *Store) Migrated() []string { return slices.Clone(s.migrated) }

// Exposed says why the store's files stay readable to other users, if
// they do: made by an older Ordo and owned by another user, or the mode
// could not be changed. Open takes group's and others' access away from
// the files the user owns; the caller warns of the rest.
func (s *Store) Exposed() error { return s.exposed }

// Close lets the Saves already queued commit, then closes the file.
func (s *Store) Close() error {
	s.wr.stop()
	return errors.Join(s.load.Close(), s.r.Close(), s.w.Close())
}

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

// Save appends run.Delta() as entry run.Seq (see memory.Checkpointer).
// Saves from all goroutines are group-committed: the committer takes
// every Save queued while the previous commit was syncing and writes them
// in one transaction, each checked on its own; Save returns once that
// transaction is durable (synchronous=FULL), with its own result.
func (s *Store) Save(ctx context.Context, run *contracts.Run) error {
	if err := memory.CheckRun(run); err != nil {
		return err
	}
	return s.save(ctx, run, lease{})
}

// SaveLeased implements memory.LeaseSaver: the new run's row is inserted
// with owner's lease.
func (s *Store) SaveLeased(ctx context.Context, run *contracts.Run, owner string, ttl time.Duration) error {
	if err := memory.CheckSaveLeased(run, owner, ttl); err != nil {
		return err
	}
	return s.save(ctx, run, lease{owner: owner, until: time.Now().Add(ttl).UnixNano()})
}

// lease is the lease a new run's row is inserted with (none: owner "").
type lease struct {
	owner string
	until int64 // unix nanoseconds
}

// args are the lease's columns: NULL for none.
func (l lease) args() (owner, until any) {
	if l.owner == "" {
		return nil, nil
	}
	return l.owner, l.until
}

func (s *Store) save(ctx context.Context, run *contracts.Run, l lease) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e, err := memory.NewEntry(run)
	if err != nil {
		return err
	}
	// A snapshot the cache (or the run's status) says is due is encoded
	// here, outside the committer; one the committer finds due from the
	// stored counts, it encodes itself.
	if ts, ok := s.sizes.Get(run.ID, run.Seq-1); memory.NeedSnapshot(run, 0, 1) || (ok && ts.Due(run, e)) {
		if err := e.AddSnapshot(run); err != nil {
			return err
		}
	}
	if err := s.commit(ctx, run, e, l); err != nil {
		return err
	}
	run.MarkLogged()
	return nil
}

// loadQuery reads a run's latest snapshot and the entries after it.
const loadQuery = `SELECT 1, seq, format_version, data FROM run_snapshots WHERE run_id = ?1
	UNION ALL
	SELECT 0, l.seq, l.format_version, l.data FROM run_log l JOIN run_snapshots s ON s.run_id = l.run_id
	WHERE l.run_id = ?1 AND l.seq > s.seq
	ORDER BY 1 DESC, 2`

// Load folds run id from its latest snapshot and the entries after it,
// read in one statement (so from one consistent state of the file).
func (s *Store) Load(ctx context.Context, id string) (*contracts.Run, error) {
	rows, err := s.load.QueryContext(ctx, id)
	if err != nil {
		return nil, memory.StoreError("load run", err)
	}
	defer rows.Close()
	var snap []byte
	var snapVer int
	var tail []memory.StoredEntry
	for rows.Next() {
		var isSnap int
		var e memory.StoredEntry
		if err := rows.Scan(&isSnap, &e.Seq, &e.Version, &e.Data); err != nil {
			return nil, memory.StoreError("load run", err)
		}
		if isSnap == 1 {
			snap, snapVer = e.Data, e.Version
		} else {
			tail = append(tail, e)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, memory.StoreError("load run", err)
	}
	if snap == nil {
		return nil, memory.NotFound(id)
	}
	return memory.FoldSnapshot(snap, snapVer, tail)
}

// Log implements memory.Checkpointer.
func (s *Store) Log(ctx context.Context, id string, after int64, limit int) ([]contracts.RunDelta, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, format_version, data FROM run_log WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
		id, after, limit)
	if err != nil {
		return nil, memory.StoreError("read run log", err)
	}
	defer rows.Close()
	var stored []memory.StoredEntry
	for rows.Next() {
		var e memory.StoredEntry
		if err := rows.Scan(&e.Seq, &e.Version, &e.Data); err != nil {
			return nil, memory.StoreError("read run log", err)
		}
		stored = append(stored, e)
	}
	if err := rows.Err(); err != nil {
		return nil, memory.StoreError("read run log", err)
	}
	return memory.LogOf(id, stored, func() memory.Row {
		return s.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = ?)`, id)
	})
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
	if f.SessionID != "" {
		where, args = append(where, "session_id = ?"), append(args, f.SessionID)
	}
	if f.InSession {
		where = append(where, "session_id <> ''")
	}
	if !f.UpdatedAfter.IsZero() {
		where, args = append(where, "updated_at > ?"), append(args, fmtTime(f.UpdatedAfter))
	}
	if !f.UpdatedBefore.IsZero() {
		where, args = append(where, "(updated_at < ? OR updated_at = ? AND id < ?)"), append(args, fmtTime(f.UpdatedBefore), fmtTime(f.UpdatedBefore), f.BeforeID)
	}
	q := `SELECT id, user_id, session_id, goal, status, seq, created_at, updated_at FROM runs`
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
		if err := rows.Scan(&r.ID, &r.UserID, &r.SessionID, &r.Goal, &r.Status, &r.Seq, &created, &updated); err != nil {
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

// Prune deletes finished runs last updated before olderThan, with their
// logs and snapshots, in one transaction.
func (s *Store) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		const doomed = `(SELECT id FROM runs WHERE final = 1 AND updated_at < ?)`
		cut := fmtTime(olderThan)
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_log WHERE run_id IN `+doomed, cut); err != nil {
			return err
		}
		for _, table := range []string{"run_snapshots", "run_requests"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE run_id IN `+doomed, cut); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE final = 1 AND updated_at < ?`, cut)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, memory.StoreError("prune runs", err)
	}
	return int(n), nil
}

// Delete implements memory.Checkpointer: the runs are checked and deleted,
// with their logs and snapshots, in one immediate transaction, so no
// process takes a lease on one between the check and the delete.
func (s *Store) Delete(ctx context.Context, ids []string) error {
	return memory.DeleteInTx(ids, &s.sizes, func(ids []string, refuse func(error) error) error {
		return s.inTx(ctx, func(tx *sql.Tx) error {
			now := time.Now()
			for _, id := range ids {
				var holder sql.NullString
				var until sql.NullInt64
				err := tx.QueryRowContext(ctx, `SELECT lease_owner, lease_until FROM runs WHERE id = ?`, id).Scan(&holder, &until)
				if errors.Is(err, sql.ErrNoRows) {
					return refuse(memory.NotFound(id))
				}
				if err != nil {
					return err
				}
				if end := time.Unix(0, until.Int64); holder.Valid && now.Before(end) {
					return refuse(memory.DeleteHeld(id, holder.String, end.Sub(now)))
				}
			}
			for _, table := range []string{"run_log", "run_snapshots", "run_requests"} {
				for _, id := range ids {
					if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE run_id = ?`, id); err != nil {
						return err
					}
				}
			}
			for _, id := range ids {
				if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// Compact implements memory.Checkpointer: each finished run last updated
// before olderThan whose log holds more than one entry gets its log
// replaced, in a transaction of its own, by one whole-run entry at its
// last sequence (its snapshot, which a finished run has at that sequence).
func (s *Store) Compact(ctx context.Context, olderThan time.Time) (int, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id FROM runs r WHERE final = 1 AND updated_at < ?
		AND EXISTS (SELECT 1 FROM run_log l WHERE l.run_id = r.id AND l.seq < r.seq)`, fmtTime(olderThan))
	if err != nil {
		return 0, memory.StoreError("compact runs", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, memory.StoreError("compact runs", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, memory.StoreError("compact runs", err)
	}
	n := 0
	for _, id := range ids {
		done, err := s.compactRun(ctx, id)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

func (s *Store) compactRun(ctx context.Context, id string) (bool, error) {
	done := false
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var seq int64
		var updated string
		err := tx.QueryRowContext(ctx, `SELECT seq, updated_at FROM runs WHERE id = ? AND final = 1`, id).Scan(&seq, &updated)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // pruned meanwhile
		}
		if err != nil {
			return err
		}
		var snapSeq int64
		var ver int
		var snap []byte
		if err := tx.QueryRowContext(ctx, `SELECT seq, format_version, data FROM run_snapshots WHERE run_id = ?`, id).
			Scan(&snapSeq, &ver, &snap); err != nil {
			return err
		}
		if snapSeq != seq { // not expected for a finished run, but fold to be sure
			tail, err := readLog(ctx, tx, id, snapSeq)
			if err != nil {
				return err
			}
			run, err := memory.FoldSnapshot(snap, ver, tail)
			if err != nil {
				return err
			}
			if snap, err = memory.EncodeRun(run); err != nil {
				return err
			}
			ver = contracts.RunFormatVersion
			if _, err := tx.ExecContext(ctx, `UPDATE run_snapshots SET seq = ?, format_version = ?, data = ? WHERE run_id = ?`,
				seq, ver, snap, id); err != nil {
				return err
			}
		}
		at, err := parseTime(updated)
		if err != nil {
			return err
		}
		entry, err := memory.WholeEntry(snap, seq, at)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_log WHERE run_id = ?`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_log (run_id, seq, format_version, whole, data) VALUES (?, ?, ?, 1, ?)`,
			id, seq, ver, entry); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET tail_bytes = 0, snap_bytes = ? WHERE id = ?`, len(snap), id); err != nil {
			return err
		}
		done = true
		return nil
	})
	if err != nil {
		if contracts.CodeOf(err) == contracts.CodeCheckpointFormat {
			return false, err
		}
		return false, memory.StoreError("compact run "+id, err)
	}
	return done, nil
}

// readLog reads run id's entries after seq.
func readLog(ctx context.Context, tx *sql.Tx, id string, after int64) ([]memory.StoredEntry, error) {
	rows, err := tx.QueryContext(ctx, `SELECT seq, format_version, data FROM run_log WHERE run_id = ? AND seq > ? ORDER BY seq`, id, after)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []memory.StoredEntry
	for rows.Next() {
		var e memory.StoredEntry
		if err := rows.Scan(&e.Seq, &e.Version, &e.Data); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// inTx runs fn in an immediate transaction on the writer connection.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// Import implements memory.Importer: the checkpoint becomes the run's
// snapshot and a whole-run entry at its sequence, both in the format it
// was written in.
func (s *Store) Import(ctx context.Context, data []byte, version int) error {
	run, err := memory.CheckImport(data, version)
	if err != nil {
		return err
	}
	snap := slices.Clone(data)
	entry, err := memory.WholeEntry(snap, run.Seq, run.UpdatedAt)
	if err != nil {
		return err
	}
	won := false
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO runs (id, user_id, goal, status, final, seq, created_at, updated_at, tail_bytes, snap_bytes, session_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT (id) DO NOTHING`,
			run.ID, run.UserID, run.Goal, string(run.Status), boolInt(run.Status.Final()), run.Seq,
			fmtTime(run.CreatedAt), fmtTime(run.UpdatedAt), len(snap), run.SessionID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		won = true
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_snapshots (run_id, seq, format_version, data) VALUES (?, ?, ?, ?)`,
			run.ID, run.Seq, version, snap); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO run_log (run_id, seq, format_version, whole, data) VALUES (?, ?, ?, 1, ?)`,
			run.ID, run.Seq, version, entry)
		return err
	})
	if err != nil {
		return memory.StoreError("import checkpoint", err)
	}
	if !won {
		return s.conflict(ctx, run)
	}
	return nil
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
