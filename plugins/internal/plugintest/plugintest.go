package plugintest

import (
	"context"
	"encoding/json"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// Server serves tools in-process, failing the test if tools could not be
// built (err) or a contract is broken.
func Server(t testing.TB, tools []sdk.Tool, err error) *Tools {
	t.Helper()
	if err != nil {
		t.Fatalf("Tools: %v", err)
	}
	srv, err := sdk.NewServer(tools...)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	checked := map[string]*contracts.Tool{}
	for _, c := range srv.Describe() {
		ct, err := contracts.NewTool(c)
		if err != nil {
			t.Fatalf("contract %s: %v", c.Tool, err)
		}
		checked[c.Tool] = ct
	}
	return &Tools{t: t, srv: srv, checked: checked}
}

// Tools is an in-process server bound to a test.
type Tools struct {
	t       testing.TB
	srv     *sdk.Server
	checked map[string]*contracts.Tool
}

// Call runs tool with payload (any JSON-marshalable value) and key, fails
// the test on error, checks that every produces_map key yields a value, and
// returns the result as decoded JSON (json.Number numbers).
func (s *Tools) Call(tool string, payload any, key string) map[string]any {
	s.t.Helper()
	v, err := s.call(tool, payload, key)
	if err != nil {
		s.t.Fatalf("%s(%v): %v", tool, payload, err)
	}
	if _, err := s.checked[tool].Produce(v); err != nil {
		s.t.Fatalf("%s: produces_map against a real result: %v", tool, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		s.t.Fatalf("%s returned %T, want an object", tool, v)
	}
	return m
}

// Err runs tool expecting failure and returns the coded error.
func (s *Tools) Err(tool string, payload any, key string) *contracts.Error {
	s.t.Helper()
	v, err := s.call(tool, payload, key)
	if err == nil {
		s.t.Fatalf("%s(%v) = %v, want an error", tool, payload, v)
	}
	return contracts.AsError(err)
}

// Refused runs tool expecting a non-retryable tool error naming field.
func (s *Tools) Refused(tool string, payload any, key, field string) *contracts.Error {
	s.t.Helper()
	e := s.Err(tool, payload, key)
	if e.Code != contracts.CodeToolFailed || e.Retryable || e.Details["field"] != field {
		s.t.Fatalf("%s(%v): %v (details %v), want a non-retryable tool error naming field %q", tool, payload, e, e.Details, field)
	}
	return e
}

// Try runs tool and returns its result or its error, for a test that
// accepts either.
func (s *Tools) Try(tool string, payload any, key string) (any, error) {
	return s.call(tool, payload, key)
}

func (s *Tools) call(tool string, payload any, key string) (any, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		s.t.Fatal(err)
	}
	out, err := s.srv.Call(context.Background(), tool, data, key)
	if err != nil {
		return nil, err
	}
	return contracts.DecodeJSON(out)
}

// OnPipe makes a named pipe at fifo and runs call, which should refuse it.
// A call still blocked after 10 s (opening the pipe waits for a writer,
// which never comes) fails the test; the pipe is then opened for writing so
// the call can end.
func OnPipe(t testing.TB, fifo string, call func()) {
	t.Helper()
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		call()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatalf("a call on the named pipe %s was still blocked after 10s", fifo)
	}
}
