package memory

import (
	"context"
	"sync"
)

// Requests a person makes of a run another process may be driving.
const (
	RequestPause  = "pause"  // stop at the next step boundary at a paused interrupt
	RequestCancel = "cancel" // stop at the next step boundary, cancelled for good
)

// Requester is implemented by stores that carry a person's request to the
// process driving a run (ordo runs pause against a run ordo serve
// executes). Only the driver writes the run: a request is a row beside
// it, which the driver reads on a timer, never once per step, and
// withdraws once it has acted on it.
type Requester interface {
	// Request records that by asks runID's driver for kind; asking again
	// replaces the earlier request of that kind.
	Request(ctx context.Context, runID, kind, by string) error
	// Requests returns runID's pending requests, kind -> by.
	Requests(ctx context.Context, runID string) (map[string]string, error)
	// Withdraw removes runID's request of kind; none is not an error.
	Withdraw(ctx context.Context, runID, kind string) error
}

var _ Requester = (*MemStore)(nil)

// memRequests holds each MemStore's requests (run id -> kind -> by). It
// lives beside the store rather than in it because a MemStore serves
// one process; the map is what engines sharing it in tests read.
var memRequests sync.Map // *MemStore -> *requestSet

type requestSet struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

func (s *MemStore) requests() *requestSet {
	v, _ := memRequests.LoadOrStore(s, &requestSet{m: map[string]map[string]string{}})
	return v.(*requestSet)
}

// Request implements Requester.
func (s *MemStore) Request(_ context.Context, runID, kind, by string) error {
	r := s.requests()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m[runID] == nil {
		r.m[runID] = map[string]string{}
	}
	r.m[runID][kind] = by
	return nil
}

// Requests implements Requester.
func (s *MemStore) Requests(_ context.Context, runID string) (map[string]string, error) {
	r := s.requests()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for k, by := range r.m[runID] {
		out[k] = by
	}
	return out, nil
}

// Withdraw implements Requester.
func (s *MemStore) Withdraw(_ context.Context, runID, kind string) error {
	r := s.requests()
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m[runID], kind)
	if len(r.m[runID]) == 0 {
		delete(r.m, runID)
	}
	return nil
}

// Rows is what ScanRequests reads: database/sql's and pgx's rows alike.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanRequests reads a database store's (kind, by) rows into Requests'
// answer; the caller closes rows.
func ScanRequests(rows Rows) (map[string]string, error) {
	out := map[string]string{}
	for rows.Next() {
		var kind, by string
		if err := rows.Scan(&kind, &by); err != nil {
			return nil, StoreError("read requests", err)
		}
		out[kind] = by
	}
	if err := rows.Err(); err != nil {
		return nil, StoreError("read requests", err)
	}
	return out, nil
}
