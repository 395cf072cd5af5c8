package storetest

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// Requests checks a memory.Requester: a store with no request yet reads
// none; a request is read back per run, asking again replaces who asked,
// withdrawing one kind leaves the other, and withdrawing what is not
// there is no error. A second handle on the same data (another process)
// sees the same requests when reopen is given.
func Requests(t *testing.T, s memory.Requester, reopen func() memory.Requester) {
	ctx := context.Background()
	if cp, ok := s.(memory.Checkpointer); ok { // stores that tie requests to runs need the runs
		for _, id := range []string{"run_req_a", "run_req_b"} {
			if err := cp.Save(ctx, SimpleRun(id, "ada", contracts.RunRunning, 1, time.Now())); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := func(r memory.Requester, id string, exp map[string]string) {
		t.Helper()
		got, err := r.Requests(ctx, id)
		if err != nil || !maps.Equal(got, exp) {
			t.Fatalf("requests of %s = %v (%v), want %v", id, got, err, exp)
		}
	}
	want(s, "run_req_a", map[string]string{})
	if err := s.Withdraw(ctx, "run_req_a", memory.RequestPause); err != nil {
		t.Fatalf("withdraw with no request: %v", err)
	}
	for _, r := range []struct{ id, kind, by string }{
		{"run_req_a", memory.RequestPause, "ada"}, {"run_req_a", memory.RequestPause, "bob"}, {"run_req_a", memory.RequestCancel, "eve"},
		{"run_req_b", memory.RequestPause, "ada"},
	} {
		if err := s.Request(ctx, r.id, r.kind, r.by); err != nil {
			t.Fatal(err)
		}
	}
	want(s, "run_req_a", map[string]string{memory.RequestPause: "bob", memory.RequestCancel: "eve"})
	if reopen != nil {
		want(reopen(), "run_req_a", map[string]string{memory.RequestPause: "bob", memory.RequestCancel: "eve"})
	}
	if err := s.Withdraw(ctx, "run_req_a", memory.RequestPause); err != nil {
		t.Fatal(err)
	}
	want(s, "run_req_a", map[string]string{memory.RequestCancel: "eve"})
	want(s, "run_req_b", map[string]string{memory.RequestPause: "ada"})
}
