package patterns

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// CollectorOptions tune a Collector; zero fields take defaults.
type CollectorOptions struct {
	Queue   int           // runs waiting to be collected before Submit drops one (default 64)
	Timeout time.Duration // per-run bound on Collect (default 30s)
	Logger  *slog.Logger  // nil means slog.Default()
}

// Collector consolidates finished runs in the background, so memory never
// slows or fails a run: Submit only enqueues, a full queue drops the run
// (logged), and a failed Collect is logged and forgotten.
type Collector struct {
	mem  *Memory
	opts CollectorOptions
	log  *slog.Logger

	mu      sync.Mutex // guards closed, pending, idle and sends on queue
	closed  bool
	pending int           // runs queued or being collected
	idle    chan struct{} // closed when pending drops to 0
	queue   chan *contracts.Run
	done    chan struct{}
}

// NewCollector starts a collector over mem. Close it to drain and stop.
func NewCollector(mem *Memory, opts CollectorOptions) *Collector {
	if opts.Queue <= 0 {
		opts.Queue = 64
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Collector{mem: mem, opts: opts, log: log, queue: make(chan *contracts.Run, opts.Queue), done: make(chan struct{})}
	go c.loop()
	return c
}

// Submit queues a copy of a finished run and returns at once. It reports
// false when the run was not queued: unfinished, queue full, or the
// collector is closed.
func (c *Collector) Submit(run *contracts.Run) bool {
	if run == nil || !run.Status.Final() {
		return false
	}
	cp, err := clone(run)
	if err != nil {
		c.log.Warn("memory: cannot copy run for collection", "run", run.ID, "err", err)
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	select {
	case c.queue <- cp:
		if c.pending == 0 {
			c.idle = make(chan struct{})
		}
		c.pending++
		return true
	default:
		c.log.Warn("memory: collection queue full; run not remembered", "run", run.ID, "queue", c.opts.Queue)
		return false
	}
}

// clone copies what Collect reads of the run, so the caller may keep
// changing its own: all of it but the state and the steps' payloads and
// results, which Collect never reads and which may hold 64 MiB (copied
// twice over at the end of every run, beside its last snapshot).
func clone(run *contracts.Run) (*contracts.Run, error) {
	c := *run
	c.State, c.Steps = nil, make([]contracts.StepRecord, len(run.Steps))
	for i, s := range run.Steps {
		s.Payload, s.Result = nil, nil
		c.Steps[i] = s
	}
	b, err := json.Marshal(&c)
	if err != nil {
		return nil, err
	}
	var cp contracts.Run
	return &cp, json.Unmarshal(b, &cp)
}

func (c *Collector) loop() {
	defer close(c.done)
	for run := range c.queue {
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
		if err := c.mem.Collect(ctx, run); err != nil {
			c.log.Warn("memory: collection failed", "run", run.ID, "user", run.UserID, "err", err)
		}
		cancel()
		c.mu.Lock()
		if c.pending--; c.pending == 0 {
			close(c.idle)
		}
		c.mu.Unlock()
	}
}

// Flush waits until every run submitted so far is collected (or ctx
// ends), e.g. before a one-shot command exits or a test reads memory.
func (c *Collector) Flush(ctx context.Context) error {
	c.mu.Lock()
	if c.pending == 0 {
		c.mu.Unlock()
		return nil
	}
	idle := c.idle
	c.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return contracts.Errorf(contracts.CodeCancelled, "memory collector still busy: %w", ctx.Err())
	}
}

// Close stops accepting runs, collects every queued one and returns when
// done or when ctx ends (queued runs are then collected in the background).
func (c *Collector) Close(ctx context.Context) error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		return contracts.Errorf(contracts.CodeCancelled, "memory collector still draining: %w", ctx.Err())
	}
}
