package memory

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// MemStore is a Checkpointer and Leaser held in process memory, for tests
// and throw-away runs. It keeps each run as its log of encoded entries and
// the latest snapshot (an encoded checkpoint), so a caller never shares
// memory with the store: what Load returns is a fresh copy, folded from the
// snapshot and the entries after it, and later changes to a saved value do
// not reach the store.
type MemStore struct {
	mu   sync.Mutex
	runs map[string]*memRun
}

type memRun struct {
	base    int64      // sequence of entries[0]; entries run on without gaps to sum.Seq
	entries []memEntry // entries[0] is a whole run
	snap    []byte     // the latest snapshot, a checkpoint of format snapVer at snapSeq (kept by Save or Load)
	snapVer int
	snapSeq int64
	tail    int64 // bytes logged after the snapshot

	sum      RunSummary
	owner    string
	leaseEnd time.Time
}

type memEntry struct {
	version int
	data    []byte
}

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{runs: map[string]*memRun{}} }

var (
	_ Checkpointer = (*MemStore)(nil)
	_ Leaser       = (*MemStore)(nil)
	_ LeaseSaver   = (*MemStore)(nil)
	_ Importer     = (*MemStore)(nil)
)

// Save appends run.Delta() as entry run.Seq; see Checkpointer. The entry
// is encoded before it is stored, so the store never shares memory with
// the run. A snapshot is kept when a whole run is logged; the others are
// taken when the run is read (Load), not on every write.
func (s *MemStore) Save(ctx context.Context, run *contracts.Run) error {
	if err := CheckRun(run); err != nil {
		return err
	}
	return s.save(ctx, run, "", 0)
}

// SaveLeased implements LeaseSaver.
func (s *MemStore) SaveLeased(ctx context.Context, run *contracts.Run, owner string, ttl time.Duration) error {
	if err := CheckSaveLeased(run, owner, ttl); err != nil {
		return err
	}
	return s.save(ctx, run, owner, ttl)
}

// save is Save; a new run gets owner's lease for ttl (owner "": none).
func (s *MemStore) save(ctx context.Context, run *contracts.Run, owner string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e, err := NewEntry(run)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[run.ID]
	var stored int64
	if r != nil {
		stored = r.sum.Seq
	}
	if run.Seq != stored+1 {
		return SequenceConflict(run.ID, run.Seq, stored)
	}
	if r == nil {
		r = &memRun{base: run.Seq}
		if owner != "" {
			r.owner, r.leaseEnd = owner, time.Now().Add(ttl)
		}
		s.runs[run.ID] = r
	}
	r.entries = append(r.entries, memEntry{version: contracts.RunFormatVersion, data: e.Data})
	if e.Snap != nil {
		r.snap, r.snapVer, r.snapSeq, r.tail = e.Snap, contracts.RunFormatVersion, run.Seq, 0
	} else {
		r.tail += int64(len(e.Data))
	}
	r.sum = Summarize(run)
	if AtRest(run.Status) {
		r.owner, r.leaseEnd = "", time.Time{}
	}
	run.MarkLogged()
	return nil
}

// Load folds run id from its snapshot and the entries after it. Where
// NeedSnapshot asks for one, the folded run becomes the new snapshot, so
// the next Load reads a snapshot and a tail no larger than it.
func (s *MemStore) Load(ctx context.Context, id string) (*contracts.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	r := s.runs[id]
	var snap []byte
	var ver int
	var tail []StoredEntry
	var tailBytes int64
	if r != nil {
		snap, ver, tailBytes = r.snap, r.snapVer, r.tail
		tail = r.stored(r.snapSeq+1, 0)
	}
	s.mu.Unlock()
	if r == nil {
		return nil, NotFound(id)
	}
	run, err := FoldSnapshot(snap, ver, tail)
	if err != nil {
		return nil, err
	}
	if len(tail) > 0 && NeedSnapshot(run, tailBytes, int64(len(snap))) {
		if err := s.keepSnapshot(r, run); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// keepSnapshot makes run, folded from r's log, r's snapshot, unless a
// newer one was kept meanwhile.
func (s *MemStore) keepSnapshot(r *memRun, run *contracts.Run) error {
	snap, err := EncodeRun(run)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.snapSeq >= run.Seq {
		return nil
	}
	var tail int64
	for _, e := range r.entries[run.Seq-r.base+1:] {
		tail += int64(len(e.data))
	}
	r.snap, r.snapVer, r.snapSeq, r.tail = snap, contracts.RunFormatVersion, run.Seq, tail
	return nil
}

// stored is up to limit (<= 0: all) entries from sequence from on. The
// bytes are never changed once stored, so they may be read unlocked.
func (r *memRun) stored(from int64, limit int) []StoredEntry {
	from = max(from, r.base)
	var out []StoredEntry
	for i := from - r.base; i < int64(len(r.entries)); i++ {
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, StoredEntry{Seq: r.base + i, Version: r.entries[i].version, Data: r.entries[i].data})
	}
	return out
}

// Log implements Checkpointer.
func (s *MemStore) Log(ctx context.Context, id string, after int64, limit int) ([]contracts.RunDelta, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	r := s.runs[id]
	var tail []StoredEntry
	if r != nil {
		tail = r.stored(after+1, limit)
	}
	s.mu.Unlock()
	if r == nil {
		return nil, NotFound(id)
	}
	return DecodeLog(tail)
}

// Compact implements Checkpointer.
func (s *MemStore) Compact(ctx context.Context, olderThan time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.runs {
		if !r.sum.Status.Final() || !r.sum.UpdatedAt.Before(olderThan) || len(r.entries) < 2 {
			continue
		}
		snap, ver := r.snap, r.snapVer
		if r.snapSeq != r.sum.Seq {
			run, err := FoldSnapshot(r.snap, r.snapVer, r.stored(r.snapSeq+1, 0))
			if err != nil {
				return n, err
			}
			if snap, err = EncodeRun(run); err != nil {
				return n, err
			}
			ver = contracts.RunFormatVersion
		}
		data, err := WholeEntry(snap, r.sum.Seq, r.sum.UpdatedAt)
		if err != nil {
			return n, err
		}
		r.base, r.entries = r.sum.Seq, []memEntry{{version: ver, data: data}}
		r.snap, r.snapVer, r.snapSeq, r.tail = snap, ver, r.sum.Seq, 0
		n++
	}
	return n, nil
}

// Import implements Importer: the checkpoint becomes the run's snapshot
// and a whole-run entry at its sequence, both kept in the format it was
// written in.
func (s *MemStore) Import(ctx context.Context, data []byte, version int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	run, err := CheckImport(data, version)
	if err != nil {
		return err
	}
	snap := slices.Clone(data)
	entry, err := WholeEntry(snap, run.Seq, run.UpdatedAt)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.runs[run.ID]; r != nil {
		return SequenceConflict(run.ID, run.Seq, r.sum.Seq)
	}
	s.runs[run.ID] = &memRun{base: run.Seq, entries: []memEntry{{version: version, data: entry}},
		snap: snap, snapVer: version, snapSeq: run.Seq, sum: Summarize(run)}
	return nil
}

// List returns summaries matching f, newest first.
func (s *MemStore) List(ctx context.Context, f Filter) ([]RunSummary, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckFilter(f); err != nil {
		return nil, err
	}
	s.mu.Lock()
	var out []RunSummary
	for _, r := range s.runs {
		if f.Match(r.sum) {
			out = append(out, r.sum)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b RunSummary) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Prune deletes finished runs last updated before olderThan, log and
// snapshot with them.
func (s *MemStore) Prune(ctx context.Context, olderThan time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, r := range s.runs {
		if r.sum.Status.Final() && r.sum.UpdatedAt.Before(olderThan) {
			delete(s.runs, id)
			n++
		}
	}
	return n, nil
}

// Delete deletes the runs ids, all or none; see Checkpointer.
func (s *MemStore) Delete(ctx context.Context, ids []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ids, err := CheckDelete(ids)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for _, id := range ids {
		r := s.runs[id]
		if r == nil {
			return NotFound(id)
		}
		if r.owner != "" && now.Before(r.leaseEnd) {
			return DeleteHeld(id, r.owner, r.leaseEnd.Sub(now))
		}
	}
	for _, id := range ids {
		delete(s.runs, id)
	}
	return nil
}

// Close does nothing; the store lives as long as the value.
func (s *MemStore) Close() error { return nil }

// Acquire implements Leaser.
func (s *MemStore) Acquire(ctx context.Context, runID, owner string, ttl time.Duration) error {
	return s.lease(ctx, runID, owner, ttl, true)
}

// Renew implements Leaser.
func (s *MemStore) Renew(ctx context.Context, runID, owner string, ttl time.Duration) error {
	return s.lease(ctx, runID, owner, ttl, false)
}

func (s *MemStore) lease(ctx context.Context, runID, owner string, ttl time.Duration, acquire bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckLease(runID, owner, ttl, true); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[runID]
	if r == nil {
		return NotFound(runID)
	}
	now := time.Now()
	free := r.owner == "" || !now.Before(r.leaseEnd)
	held := r.owner == owner && !free
	if !held && !(acquire && free) {
		return LeaseHeld(runID, owner, r.owner, r.leaseEnd.Sub(now))
	}
	r.owner, r.leaseEnd = owner, now.Add(ttl)
	return nil
}

// Release implements Leaser.
func (s *MemStore) Release(ctx context.Context, runID, owner string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckLease(runID, owner, time.Nanosecond, true); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.runs[runID]; r != nil && r.owner == owner {
		r.owner, r.leaseEnd = "", time.Time{}
	}
	return nil
}

// ClaimExpired implements Leaser; oldest-updated runs are claimed first.
func (s *MemStore) ClaimExpired(ctx context.Context, owner string, ttl time.Duration, limit int) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckClaim(owner, ttl, limit); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	var expired []*memRun
	for _, r := range s.runs {
		if r.owner != "" && !now.Before(r.leaseEnd) && !r.sum.Status.Final() {
			expired = append(expired, r)
		}
	}
	slices.SortFunc(expired, func(a, b *memRun) int {
		if c := a.sum.UpdatedAt.Compare(b.sum.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.sum.ID, b.sum.ID)
	})
	ids := []string{}
	for _, r := range expired[:min(limit, len(expired))] {
		r.owner, r.leaseEnd = owner, now.Add(ttl)
		ids = append(ids, r.sum.ID)
	}
	return ids, nil
}
