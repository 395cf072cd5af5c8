package mcpserver

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/contracts"
)

// A task cancelled before its handler runs is taken by that handler all
// the same, already stopped; a task created past its user's cap is
// refused to its handler with 3007, and only its own: the request a task
// was created by is what binds it.
func TestTaskBoundToItsRequest(t *testing.T) {
	ts := newTasks(1)
	ctxOf := func(req *server.RequestProtocolInfo) context.Context {
		return server.WithRequestProtocolInfo(withIdentity(context.Background(), Identity{User: "u"}), req)
	}
	early, running, over := &server.RequestProtocolInfo{}, &server.RequestProtocolInfo{}, &server.RequestProtocolInfo{}

	ts.created("early", "u", early, time.Now())
	ts.cancel("early")
	ts.ended("early")
	ts.created("running", "u", running, time.Now())
	ts.created("over", "u", over, time.Now())

	if _, _, err := ts.detach(ctxOf(over), time.Hour); contracts.CodeOf(err) != contracts.CodeTooManyTasks {
		t.Errorf("the task past the cap: %v, want %d", err, contracts.CodeTooManyTasks)
	}
	runCtx, release, err := ts.detach(ctxOf(running), time.Hour)
	if err != nil || runCtx.Err() != nil {
		t.Fatalf("the running task: %v %v", err, runCtx.Err())
	}
	defer release()
	ctx, stop, err := ts.detach(ctxOf(early), time.Hour)
	if err != nil || ctx.Err() == nil {
		t.Fatalf("the task cancelled before its handler ran: %v, its context not stopped", err)
	}
	stop()
	ts.cancel("running")
	if runCtx.Err() == nil {
		t.Error("tasks/cancel did not stop the running task's work")
	}
	if ts.running["u"] != 2 { // running and over; early ended
		t.Errorf("running tasks of u: %d, want 2", ts.running["u"])
	}
}
