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
// and throw-away runs. It keeps each run as its encoded checkpoint, so a
// caller never shares memory with the store: what Load returns is a fresh
// copy and later changes to a saved value do not reach the store.
type MemStore struct {
	mu   sync.Mutex
	runs map[string]*memRun
}

type memRun struct {
	data     []byte
	version  int
	sum      RunSummary
	owner    string
	leaseEnd time.Time
}

// NewMemStore returns an empty in-memory store.
func NewMemStore() *MemStore { return &MemStore{runs: map[string]*memRun{}} }

var (
	_ Checkpointer = (*MemStore)(nil)
	_ Leaser       = (*MemStore)(nil)
	_ Importer     = (*MemStore)(nil)
)

// Save stores run as checkpoint run.Seq; see Checkpointer.
func (s *MemStore) Save(ctx context.Context, run *contracts.Run) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckRun(run); err != nil {
		return err
	}
	data, err := EncodeRun(run)
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
		r = &memRun{}
		s.runs[run.ID] = r
	}
	r.data, r.version, r.sum = data, contracts.RunFormatVersion, Summarize(run)
	return nil
}

// Load returns a copy of the latest checkpoint of run id.
func (s *MemStore) Load(ctx context.Context, id string) (*contracts.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	r := s.runs[id]
	var data []byte
	var version int
	if r != nil {
		data, version = r.data, r.version
	}
	s.mu.Unlock()
	if r == nil {
		return nil, NotFound(id)
	}
	return DecodeRun(data, version)
}

// Import implements Importer.
func (s *MemStore) Import(ctx context.Context, data []byte, version int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	run, err := CheckImport(data, version)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.runs[run.ID]; r != nil {
		return SequenceConflict(run.ID, run.Seq, r.sum.Seq)
	}
	s.runs[run.ID] = &memRun{data: slices.Clone(data), version: version, sum: Summarize(run)}
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

// Prune deletes finished runs last updated before olderThan.
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
