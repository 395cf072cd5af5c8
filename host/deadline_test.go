package host

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitDone fails t unless ctx ends within a generous bound (a broken
// timer would otherwise hang the test; nothing here measures time).
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("context never ended")
	}
}

// The contexts of one deadline set end as context.WithDeadline's do:
// each at its own deadline, whichever order they were made in, with
// DeadlineExceeded as Err and cause; the contexts made from them see the
// deadline and end with them; a later deadline is still open.
func TestDeadlinesEndEachAtItsDeadline(t *testing.T) {
	s := newDeadlines()
	now := time.Now()
	late, cancelLate := s.withDeadline(context.Background(), now.Add(time.Hour))
	defer cancelLate()
	mid, cancelMid := s.withDeadline(context.Background(), now.Add(80*time.Millisecond))
	defer cancelMid()
	early, cancelEarly := s.withDeadline(context.Background(), now.Add(20*time.Millisecond)) // sooner than the armed timer
	defer cancelEarly()
	child, cancelChild := context.WithCancel(mid)
	defer cancelChild()
	timed, cancelTimed := context.WithTimeout(mid, time.Hour)
	defer cancelTimed()
	if d, ok := timed.Deadline(); !ok || !d.Equal(now.Add(80*time.Millisecond)) {
		t.Fatalf("a context made from one has deadline %v, %v", d, ok)
	}

	waitDone(t, early)
	if !errors.Is(early.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(early), context.DeadlineExceeded) {
		t.Fatalf("early: err %v, cause %v", early.Err(), context.Cause(early))
	}
	waitDone(t, mid)
	if !errors.Is(mid.Err(), context.DeadlineExceeded) {
		t.Fatalf("mid: err %v", mid.Err())
	}
	waitDone(t, child)
	waitDone(t, timed)
	if !errors.Is(context.Cause(child), context.DeadlineExceeded) || !errors.Is(context.Cause(timed), context.DeadlineExceeded) {
		t.Fatalf("made from mid: causes %v, %v", context.Cause(child), context.Cause(timed))
	}
	if late.Err() != nil {
		t.Fatalf("a deadline an hour away ended: %v", late.Err())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) != 1 || !s.due.Equal(now.Add(time.Hour)) {
		t.Fatalf("pending %d, due %v: want the late one armed", len(s.pending), s.due)
	}
}

// An attempt that ends before its deadline leaves the set, and its
// context reports Canceled; a parent that ends first ends the context
// with the parent's error.
func TestDeadlinesCancelAndParent(t *testing.T) {
	s := newDeadlines()
	ctx, cancel := s.withDeadline(context.Background(), time.Now().Add(time.Hour))
	cancel()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("err %v, want Canceled", ctx.Err())
	}
	parent, stop := context.WithCancel(context.Background())
	ctx, cancel = s.withDeadline(parent, time.Now().Add(time.Hour))
	defer cancel()
	stop()
	waitDone(t, ctx)
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("err %v, want the parent's Canceled", ctx.Err())
	}
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) != 0 {
		t.Fatalf("%d attempts still pending", len(s.pending))
	}
}
