// Package testwait bounds a test's wait for something another goroutine or
// process does asynchronously (a catalog event, a run settling, a server
// coming up). The deadline only keeps a broken test from hanging: nothing
// here asserts how long anything takes. Only tests import it.
package testwait

import (
	"testing"
	"time"
)

// interval is how often a condition is polled.
const interval = 10 * time.Millisecond

// For polls check until it returns nil; once timeout has passed it fails tb
// with check's last error. check may itself fail tb for a state that can
// never become right.
func For(tb testing.TB, timeout time.Duration, check func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("gave up after %s: %v", timeout, err)
		}
		time.Sleep(interval)
	}
}

// Until polls cond until it holds; once timeout has passed it fails tb,
// saying it was waiting for what.
func Until(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("gave up after %s waiting for %s", timeout, what)
		}
		time.Sleep(interval)
	}
}
