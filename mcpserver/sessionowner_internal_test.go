package mcpserver

import (
	"testing"
	"time"
)

// TestSessionOwners: the first user to use an id owns it; another is
// refused until the owner ends it or leaves it unused past the TTL, and
// unused ids are swept out of the table.
func TestSessionOwners(t *testing.T) {
	o := newSessionOwners()
	now := time.Unix(1e9, 0)
	o.now = func() time.Time { return now }
	if !o.claim("s1", "ada") || !o.claim("s1", "ada") || o.claim("s1", "bob") {
		t.Fatal("s1 is ada's alone")
	}
	o.end("s1")
	if !o.claim("s1", "bob") {
		t.Fatal("an ended id is free")
	}
	o.claim("s2", "ada")
	now = now.Add(sessionOwnerTTL - time.Minute)
	if o.claim("s2", "bob") {
		t.Fatal("a session used within the TTL stays its owner's")
	}
	now = now.Add(sessionOwnerTTL + time.Minute) // s1 and s2 unused past the TTL
	if !o.claim("s3", "eve") || len(o.m) != 1 {
		t.Fatalf("unused ids not swept: %d left", len(o.m))
	}
}
