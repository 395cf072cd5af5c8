package mcpserver

import (
	"bytes"
	"context"
	"io"
	"sync"
)

// counter is a count that can be waited on.
type counter struct {
	mu      sync.Mutex
	n       int
	changed chan struct{} // closed and replaced on every add
}

func newCounter() *counter { return &counter{changed: make(chan struct{})} }

func (c *counter) add() {
	c.mu.Lock()
	c.n++
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// waitFor reports whether the count reached n before ctx ended.
func (c *counter) waitFor(ctx context.Context, n int) bool {
	for {
		c.mu.Lock()
		got, changed := c.n, c.changed
		c.mu.Unlock()
		if got >= n {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

type stdioProgressKey struct{}

// stdioProgress orders progress notifications before their response on
// stdio. mcp-go writes notifications from a goroutine of its own, fed by a
// channel, while a response is written by the handler that returns it, so
// a response could overtake its last notifications (and a client drops
// progress that arrives after the result). Progress notifications are
// numbered as they are queued and counted as they are written; a handler
// waits until its last one is out (see notifier.delivered). The channel is
// FIFO, so every earlier one is out too.
type stdioProgress struct {
	io.Writer
	mu      sync.Mutex // orders numbering with queueing
	queued  int
	written *counter
}

var progressMethod = []byte(`"method":"notifications/progress"`)

func newStdioProgress(w io.Writer) *stdioProgress {
	return &stdioProgress{Writer: w, written: newCounter()}
}

// Write sees each message whole: mcp-go writes one line per Write.
func (p *stdioProgress) Write(b []byte) (int, error) {
	n, err := p.Writer.Write(b)
	if bytes.Contains(b, progressMethod) {
		p.written.add()
	}
	return n, err
}

// queue runs send, which queues one progress notification without
// blocking, and returns its number if it was queued.
func (p *stdioProgress) queue(send func() error) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := send(); err != nil {
		return 0, err
	}
	p.queued++
	return p.queued, nil
}
