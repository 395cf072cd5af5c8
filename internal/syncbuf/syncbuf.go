// Package syncbuf is a text buffer one goroutine or process writes while
// another reads it: a test's view of a log, a terminal or a follower's
// output. Only tests import it.
package syncbuf

import (
	"strings"
	"sync"
)

// Buffer is a strings.Builder safe for concurrent Write and String. The
// zero value is empty and ready to use.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p; it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what has been written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
