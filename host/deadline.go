package host

import (
	"context"
	"sync"
	"time"
)

// deadlines ends the contexts of one Timeout layer's attempts from a
// single runtime timer. context.WithTimeout arms a timer per attempt, and
// arming a timer due sooner than any other the process has pending wakes
// the runtime's network poller or an idle thread: microseconds on every
// plugin call, as much as the rest of the host's layers together (issue
// 14). Attempts under one timeout end about in the order they start, so
// the timer, armed for the earliest deadline and left armed as attempts
// end, is set again about once per timeout rather than once per call.
type deadlines struct {
	mu      sync.Mutex
	timer   *time.Timer
	due     time.Time // when timer fires; zero while it is not armed
	pending map[*deadlineCtx]struct{}
}

func newDeadlines() *deadlines {
	return &deadlines{pending: map[*deadlineCtx]struct{}{}}
}

// deadlineCtx ends at deadline or when its parent ends. Once the deadline
// has passed its Err is context.DeadlineExceeded, as a context.WithDeadline's
// would be; a context made from it then reports context.Canceled with
// cause context.DeadlineExceeded.
type deadlineCtx struct {
	context.Context // a cancel context of the parent
	cancel          context.CancelCauseFunc
	deadline        time.Time
}

func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *deadlineCtx) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

// withDeadline is context.WithDeadline(parent, at) for a parent whose own
// deadline, if any, is later than at. Call the returned func when the
// attempt ends.
func (s *deadlines) withDeadline(parent context.Context, at time.Time) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancelCause(parent)
	c := &deadlineCtx{Context: cctx, cancel: cancel, deadline: at}
	s.mu.Lock()
	s.pending[c] = struct{}{}
	if s.due.IsZero() || at.Before(s.due) {
		s.arm(at)
	}
	s.mu.Unlock()
	return c, func() {
		s.mu.Lock()
		delete(s.pending, c)
		s.mu.Unlock()
		cancel(context.Canceled)
	}
}

// arm sets the timer to fire at at; s.mu is held.
func (s *deadlines) arm(at time.Time) {
	s.due = at
	if s.timer == nil {
		s.timer = time.AfterFunc(time.Until(at), s.fire)
		return
	}
	s.timer.Reset(time.Until(at))
}

// fire ends the attempts whose deadline has passed and arms the timer for
// the earliest of the others.
func (s *deadlines) fire() {
	now := time.Now()
	var expired []*deadlineCtx
	s.mu.Lock()
	var next time.Time
	for c := range s.pending {
		switch {
		case !now.Before(c.deadline):
			delete(s.pending, c)
			expired = append(expired, c)
		case next.IsZero() || c.deadline.Before(next):
			next = c.deadline
		}
	}
	s.due = time.Time{}
	if !next.IsZero() {
		s.arm(next)
	}
	s.mu.Unlock()
	for _, c := range expired {
		c.cancel(context.DeadlineExceeded)
	}
}
