package console

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// spinEvery is how often the spinner's line is redrawn.
const spinEvery = 100 * time.Millisecond

var spinFrames = []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")

// clearLine returns the cursor to the start of the line and erases it.
const clearLine = "\r\x1b[K"

// Spinner keeps one line at the bottom of a terminal that says what Ordo
// waits for and for how long ("⠹ waiting for the planner  3.2s"), redrawn
// in place while a model call (or anything else slow) is under way.
// Everything written through it goes above that line, so it never mixes
// with other output. On anything but a terminal (a pipe, a file, a CI log)
// it only passes writes on: no control characters end up in a log.
type Spinner struct {
	w        io.Writer
	terminal bool

	mu    sync.Mutex
	label string
	since time.Time
	frame int
	drawn bool          // a frame is on the screen
	stop  chan struct{} // non-nil while spinning
	done  chan struct{}
}

// NewSpinner writes to w; terminal says whether w is a terminal (the
// caller decides, so a test can drive either case).
func NewSpinner(w io.Writer, terminal bool) *Spinner {
	return &Spinner{w: w, terminal: terminal}
}

// Start shows label with the time since now, until Stop or the next Start.
func (s *Spinner) Start(label string) {
	if !s.terminal {
		return
	}
	s.Stop()
	stop, done := make(chan struct{}), make(chan struct{})
	s.mu.Lock()
	s.label, s.since, s.stop, s.done = label, time.Now(), stop, done
	s.draw()
	s.mu.Unlock()
	go func() {
		defer close(done)
		tick := time.NewTicker(spinEvery)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				s.mu.Lock()
				s.draw()
				s.mu.Unlock()
			}
		}
	}()
}

// Stop removes the line; without a Start it does nothing.
func (s *Spinner) Stop() {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop, s.done = nil, nil
	s.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	s.mu.Lock()
	s.clear()
	s.mu.Unlock()
}

// Write writes p above the spinner's line: the line is erased first and,
// once p ends a line, drawn again below it.
func (s *Spinner) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clear()
	n, err := s.w.Write(p)
	if s.stop != nil && len(p) > 0 && p[len(p)-1] == '\n' {
		s.draw()
	}
	return n, err
}

// draw writes the next frame; s.mu is held.
func (s *Spinner) draw() {
	elapsed := time.Since(s.since).Seconds()
	fmt.Fprintf(s.w, "%s  %c %s  %.1fs", clearLine, spinFrames[s.frame%len(spinFrames)], s.label, elapsed)
	s.frame++
	s.drawn = true
}

// clear erases a drawn frame; s.mu is held.
func (s *Spinner) clear() {
	if s.drawn {
		io.WriteString(s.w, clearLine)
		s.drawn = false
	}
}
