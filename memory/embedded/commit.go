package embedded

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// Group commit. SQLite has one writer and, with synchronous=FULL, every
// commit syncs the write-ahead log: one transaction per Save would cap the
// store at one Save per sync. Instead Save hands its encoded entry to one
// committer goroutine and waits; the committer takes everything queued
// (the Saves that arrived while the previous transaction was syncing),
// applies each in the same immediate transaction, commits once, and only
// then gives each caller its own result. Each Save is checked on its own
// by the WHERE clause of its own write, so one Save's sequence conflict
// neither fails nor rolls back another's. A write that fails (the disk,
// not the caller) fails its own Save: the transaction is rolled back and
// the rest of the batch is applied again in a new one. (Savepoints would
// isolate it too, but cost a statement journal write per Save.)

// maxBatch bounds one group commit.
const maxBatch = 512

var errClosed = errors.New("store is closed")

// saveReq is one Save, or one other small write (fn), waiting for the
// committer.
type saveReq struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *sql.Tx) error // a write other than a Save: leases
	run  *contracts.Run                              // read by the committer only while Save waits
	e    memory.Entry
	l    lease           // a new run's lease (SaveLeased)
	next memory.TailSize // the run's figures after this entry
	err  error
	bad  bool // its write failed: not retried with the batch
	done chan struct{}
}

// writer holds what the committer owns.
type writer struct {
	queue     chan *saveReq
	closeMu   sync.RWMutex // held for reading while sending on queue
	closed    bool
	closeOnce sync.Once
	stopped   chan struct{}
	commits   atomic.Int64 // transactions committed, for tests
	unsynced  atomic.Int64 // of them, lease changes alone committed without a sync

	// Statements prepared on the writer connection.
	selSeq, insRun, updRun, setSizes, insLog, putSnap *sql.Stmt
	acquire, renew, release                           *sql.Stmt // lease.go
}

func (s *Store) startWriter(ctx context.Context) error {
	w := &s.wr
	w.queue = make(chan *saveReq, 4*maxBatch)
	w.stopped = make(chan struct{})
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&w.selSeq, `SELECT seq FROM runs WHERE id = ?`},
		{&w.insRun, `INSERT INTO runs (id, user_id, goal, status, final, seq, created_at, updated_at, tail_bytes, snap_bytes, session_id,
			lease_owner, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`},
		{&w.updRun, `UPDATE runs SET user_id = ?, goal = ?, status = ?, final = ?, seq = ?, created_at = ?, updated_at = ?,
			tail_bytes = CASE WHEN ? THEN 0 ELSE tail_bytes + ? END,
			snap_bytes = CASE WHEN ? THEN ? ELSE snap_bytes END,
			lease_owner = CASE WHEN ? THEN NULL ELSE lease_owner END, lease_until = CASE WHEN ? THEN NULL ELSE lease_until END
			WHERE id = ? AND seq = ? RETURNING tail_bytes, snap_bytes`},
		{&w.setSizes, `UPDATE runs SET tail_bytes = ?, snap_bytes = ? WHERE id = ?`},
		{&w.insLog, `INSERT INTO run_log (run_id, seq, format_version, whole, data) VALUES (?, ?, ?, ?, ?)`},
		{&w.putSnap, `INSERT INTO run_snapshots (run_id, seq, format_version, data) VALUES (?, ?, ?, ?)
			ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq, format_version = excluded.format_version, data = excluded.data`},
		{&w.acquire, `UPDATE runs SET lease_owner = ?, lease_until = ? WHERE id = ?
			AND (lease_owner IS NULL OR lease_owner = ? OR lease_until <= ?)`},
		{&w.renew, `UPDATE runs SET lease_until = ? WHERE id = ? AND lease_owner = ? AND lease_until > ?`},
		{&w.release, `UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?`},
	} {
		st, err := s.w.PrepareContext(ctx, p.q)
		if err != nil {
			w.closeStmts()
			return err
		}
		*p.dst = st
	}
	go s.commitLoop()
	return nil
}

func (w *writer) closeStmts() {
	for _, st := range []*sql.Stmt{w.selSeq, w.insRun, w.updRun, w.setSizes, w.insLog, w.putSnap, w.acquire, w.renew, w.release} {
		if st != nil {
			st.Close()
		}
	}
}

// stop lets the committer finish what is queued and waits for it.
func (w *writer) stop() {
	w.closeOnce.Do(func() {
		w.closeMu.Lock()
		w.closed = true
		close(w.queue)
		w.closeMu.Unlock()
		<-w.stopped
		w.closeStmts()
	})
}

// commit queues e and waits for the transaction that holds it. A Save
// whose context ends before the committer reaches it is not written; once
// reached, it is waited for (its transaction is bounded by busy_timeout),
// so that the caller never hears "failed" about a Save that committed.
func (s *Store) commit(ctx context.Context, run *contracts.Run, e memory.Entry, l lease) error {
	req := &saveReq{ctx: ctx, run: run, e: e, l: l, done: make(chan struct{})}
	if err := s.enqueue(req); err != nil {
		return memory.StoreError("save checkpoint", err)
	}
	if req.err == nil {
		s.sizes.Set(run.ID, req.next, run.Status.Final())
	}
	return req.err
}

// groupWrite runs fn in the committer's next transaction, beside the
// Saves queued with it, and returns once that transaction is durable. fn
// may run more than once (if another write in its batch fails, the batch
// is applied again), so it must only record its outcome, not act on it.
// Lease changes use it, so that they cost no sync of their own.
func (s *Store) groupWrite(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &saveReq{ctx: ctx, fn: fn, done: make(chan struct{})}
	if err := s.enqueue(req); err != nil {
		return err
	}
	return req.err
}

func (s *Store) enqueue(req *saveReq) error {
	w := &s.wr
	w.closeMu.RLock()
	if w.closed {
		w.closeMu.RUnlock()
		return errClosed
	}
	w.queue <- req
	w.closeMu.RUnlock()
	<-req.done
	return nil
}

func (s *Store) commitLoop() {
	w := &s.wr
	defer close(w.stopped)
	batch := make([]*saveReq, 0, maxBatch)
	for req := range w.queue {
		batch = append(batch[:0], req)
	fill:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-w.queue:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		s.commitBatch(batch)
		clear(batch)
	}
}

// commitBatch writes batch in one transaction and reports to each caller.
func (s *Store) commitBatch(batch []*saveReq) {
	defer func() {
		for _, req := range batch {
			close(req.done)
		}
	}()
	for s.tryBatch(batch) {
	}
}

// tryBatch applies the batch's Saves not marked bad in one transaction and
// commits it. If a write fails it marks that Save bad, rolls back and
// returns true: the caller tries the rest again.
func (s *Store) tryBatch(batch []*saveReq) (again bool) {
	ctx := context.Background()
	begin, unsynced := s.w.BeginTx, false
	if s.fullSync && leasesOnly(batch) {
		conn, err := s.unsynced(ctx)
		if err == nil {
			defer s.resync(ctx, conn)
			begin, unsynced = conn.BeginTx, true
		}
	}
	tx, err := begin(ctx, nil)
	if err != nil {
		for _, req := range batch {
			if !req.bad {
				req.err = req.failed(err)
			}
		}
		return false
	}
	w := &s.wr
	st := txStmts{tx.StmtContext(ctx, w.selSeq), tx.StmtContext(ctx, w.insRun), tx.StmtContext(ctx, w.updRun),
		tx.StmtContext(ctx, w.setSizes), tx.StmtContext(ctx, w.insLog), tx.StmtContext(ctx, w.putSnap)}
	written := 0
	for _, req := range batch {
		if req.bad {
			continue
		}
		if req.err = req.ctx.Err(); req.err != nil {
			continue
		}
		var wrote bool
		if req.fn != nil {
			req.err = req.fn(ctx, tx) // the caller wraps it
			wrote = req.err != nil
		} else {
			wrote, req.err = st.apply(ctx, req)
		}
		switch {
		case req.err == nil:
			written++
		case wrote:
			req.bad = true
			tx.Rollback()
			return true
		}
	}
	if written == 0 {
		tx.Rollback()
		return false
	}
	err = tx.Commit()
	w.commits.Add(1)
	if unsynced {
		w.unsynced.Add(1)
	}
	if err != nil {
		for _, req := range batch {
			if req.err == nil {
				req.err = req.failed(err)
			}
		}
	}
	return false
}

// failed is req's error when its transaction could not begin or commit: a
// Save's says so; another write's caller names its own operation.
func (req *saveReq) failed(err error) error {
	if req.fn != nil {
		return err
	}
	return memory.StoreError("save checkpoint", err)
}

// leasesOnly reports whether the batch's writes are all lease changes
// (Acquire, Renew, Release, ClaimExpired), with no Save among them.
func leasesOnly(batch []*saveReq) bool {
	for _, req := range batch {
		if !req.bad && req.fn == nil {
			return false
		}
	}
	return true
}

// unsynced takes the writer connection for a batch of lease changes alone
// and sets it to synchronous=NORMAL: in WAL mode its commit is not synced.
// A lease need not survive the machine's crash, only the process's (the
// WAL is written before COMMIT returns, so other processes and a restart
// see it): a crash of the machine ends every holder too, and a lost lease
// change is a lease that lapses sooner (acquire, renew, claim) or later
// (release: at most the ttl after it). The next Save's sync makes it
// durable anyway, since syncing the WAL syncs everything written before.
// So a lone run's lease take and release cost no sync of their own, and a
// Save's durability is unchanged: every batch with a Save is FULL.
func (s *Store) unsynced(ctx context.Context) (*sql.Conn, error) {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = NORMAL"); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// resync puts the writer connection back to synchronous=FULL after the
// lease batch's transaction ended; a connection that cannot be is
// discarded (the next one opens FULL, as the DSN says), never reused.
func (s *Store) resync(ctx context.Context, conn *sql.Conn) {
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = FULL"); err != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	conn.Close()
}

type txStmts struct {
	selSeq, insRun, updRun, setSizes, insLog, putSnap *sql.Stmt
}

// apply checks and writes one Save inside the batch's transaction; wrote
// says whether a failure came after something of it may have been written.
// The sequence check is the write's own WHERE clause (seq 1: the insert's
// ON CONFLICT), so nothing is written for a refused Save; whether a
// snapshot is due is then known from the row's byte counts, which the
// update returns.
func (st txStmts) apply(ctx context.Context, req *saveReq) (wrote bool, err error) {
	run, e := req.run, &req.e
	var n int64
	if run.Seq == 1 {
		req.next = memory.TailSize{Seq: 1, Snap: int64(len(e.Snap))}
		owner, until := req.l.args()
		res, err := st.insRun.ExecContext(ctx, run.ID, run.UserID, run.Goal, string(run.Status), boolInt(run.Status.Final()), run.Seq,
			fmtTime(run.CreatedAt), fmtTime(run.UpdatedAt), req.next.Tail, req.next.Snap, run.SessionID, owner, until)
		if err == nil {
			n, err = res.RowsAffected()
		}
		if err != nil {
			return true, memory.StoreError("save checkpoint", err)
		}
	} else {
		withSnap, rest := e.Snap != nil, boolInt(memory.AtRest(run.Status))
		err := st.updRun.QueryRowContext(ctx, run.UserID, run.Goal, string(run.Status), boolInt(run.Status.Final()), run.Seq,
			fmtTime(run.CreatedAt), fmtTime(run.UpdatedAt), boolInt(withSnap), len(e.Data), boolInt(withSnap), len(e.Snap),
			rest, rest, run.ID, run.Seq-1).Scan(&req.next.Tail, &req.next.Snap)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return true, memory.StoreError("save checkpoint", err)
		default:
			n = 1
		}
		req.next.Seq = run.Seq
		if n == 1 && !withSnap && memory.NeedSnapshot(run, req.next.Tail, req.next.Snap) {
			// Save's cache did not know the run: the row's counts say a
			// snapshot is due.
			if err := e.AddSnapshot(run); err != nil {
				return true, err
			}
			req.next = memory.TailSize{Seq: run.Seq, Snap: int64(len(e.Snap))}
			if _, err := st.setSizes.ExecContext(ctx, req.next.Tail, req.next.Snap, run.ID); err != nil {
				return true, memory.StoreError("save checkpoint", err)
			}
		}
	}
	if n != 1 {
		var stored int64
		err := st.selSeq.QueryRowContext(ctx, run.ID).Scan(&stored)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, memory.StoreError("save checkpoint", err)
		}
		return false, memory.SequenceConflict(run.ID, run.Seq, stored)
	}
	if _, err := st.insLog.ExecContext(ctx, run.ID, run.Seq, contracts.RunFormatVersion, boolInt(e.Whole), e.Data); err != nil {
		return true, memory.StoreError("save checkpoint", err)
	}
	if e.Snap != nil {
		if _, err := st.putSnap.ExecContext(ctx, run.ID, run.Seq, contracts.RunFormatVersion, e.Snap); err != nil {
			return true, memory.StoreError("save checkpoint", err)
		}
	}
	return false, nil
}
