package filelock

import (
	"fmt"
	"os"
	"sync"
)

// Mutex is held by one goroutine of one process at a time.
type Mutex struct {
	mu sync.Mutex
	f  *os.File
}

// Open opens (creating, mode 0600) the lock file at path.
func Open(path string) (*Mutex, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	return &Mutex{f: f}, nil
}

// Lock waits for the lock: first among this process's goroutines (flock
// locks belong to the open file, which they share), then among processes.
func (m *Mutex) Lock() error {
	m.mu.Lock()
	if err := flock(m.f); err != nil {
		m.mu.Unlock()
		return fmt.Errorf("lock %s: %w", m.f.Name(), err)
	}
	return nil
}

// Unlock lets the next holder in.
func (m *Mutex) Unlock() {
	_ = funlock(m.f)
	m.mu.Unlock()
}
