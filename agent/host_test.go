package agent

import (
	"context"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
)

// The engine against the real host with in-process tools (seed 004 scenario 1).
func TestWithRealHost(t *testing.T) {
	h, err := host.New()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	p, err := host.InProcess(notesTool(), chatTool())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddProvider(context.Background(), "test", "1", p); err != nil {
		t.Fatal(err)
	}
	run, err := New(Config{}, Deps{Tools: h}).Run(context.Background(), Request{Plan: mustPlan(t, notesChatPlan)})
	wantStatus(t, run, err, contracts.RunCompleted)
	if stateOf(t, run, "message_ts") != "1700000000.0001" || stateOf(t, run, "page_url") != "https://notes.local/page_123" {
		t.Fatalf("state = %v", run.State)
	}
}
