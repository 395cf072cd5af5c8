package mcpserver

import (
	"strings"
	"testing"
	"time"
)

// TestSessionOwners: an id initialize handed out is its user's alone
// until ended, or unused past the TTL with no request in flight, and
// refused once mcp-go dropped its session; ids a
// client makes up are not kept, whatever their size.
func TestSessionOwners(t *testing.T) {
	o := newSessionOwners()
	now := time.Unix(1e9, 0)
	o.now = func() time.Time { return now }
	o.opened("s1", "ada")
	if !o.enter("s1", "ada") || o.enter("s1", "bob") {
		t.Fatal("s1 is ada's alone")
	}
	o.leave("s1")
	o.end("s1")
	if !o.enter("s1", "bob") {
		t.Fatal("an ended id binds nobody")
	}
	o.leave("s1")
	o.opened("s2", "ada")
	o.drop("s2") // mcp-go dropped the idle session
	if o.enter("s2", "ada") || o.enter("s2", "bob") {
		t.Fatal("a dropped session's id is refused")
	}
	o.end("s2")
	if !o.enter(strings.Repeat("x", 1<<20), "eve") || len(o.m) != 0 {
		t.Fatalf("a made-up id was kept: %d ids", len(o.m))
	}

	o.opened("stream", "ada")
	o.enter("stream", "ada") // a GET stream that stays open
	o.opened("idle", "ada")
	now = now.Add(sessionOwnerTTL + 2*time.Hour)
	o.opened("new", "cat") // sweeps
	if o.m["idle"] != nil || o.m["stream"] == nil || o.enter("stream", "bob") {
		t.Fatalf("after the TTL: idle kept %v, open stream kept %v", o.m["idle"] != nil, o.m["stream"] != nil)
	}
}
