package filelock

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

const (
	counterEnv = "FILELOCK_TEST_COUNTER"
	rounds     = 200
)

// TestMain doubles as the child process of TestProcessesDoNotLoseUpdates.
func TestMain(m *testing.M) {
	if path := os.Getenv(counterEnv); path != "" {
		if err := increment(path, rounds); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// increment adds one to the number in path n times, each a read, a
// yield and a write under the lock: without it, updates are lost.
func increment(path string, n int) error {
	m, err := Open(path + ".lock")
	if err != nil {
		return err
	}
	for range n {
		if err := m.Lock(); err != nil {
			return err
		}
		data, _ := os.ReadFile(path)
		v, _ := strconv.Atoi(string(data))
		runtime.Gosched()
		err := os.WriteFile(path, []byte(strconv.Itoa(v+1)), 0o600)
		m.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// Two processes with two goroutines each increment one counter file.
func TestProcessesDoNotLoseUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "counter")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 2 {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), counterEnv+"="+path)
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("child: %v\n%s", err, out)
			}
		})
		wg.Go(func() { errs <- increment(path, rounds) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(path); string(data) != strconv.Itoa(4*rounds) {
		t.Fatalf("counter = %s, want %d", data, 4*rounds)
	}
}
