package storetest

import (
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// testSessions: List finds a user's turns of one session (the engine's
// conversation history) and the runs that are turns of any session, and
// summaries carry the session id.
func testSessions(t *testing.T, s memory.Checkpointer) {
	at := func(n int) time.Time { return Base.Add(time.Duration(n) * time.Minute) }
	turn := func(id, user, session string, n int) {
		run := SimpleRun(id, user, contracts.RunCompleted, 1, at(n))
		run.SessionID = session
		mustSave(t, s, run)
	}
	turn("t1", "ana", "trip", 1)
	turn("t2", "bo", "trip", 2) // bo's session of the same name is another
	turn("t3", "ana", "work", 3)
	turn("t4", "ana", "trip", 4)
	turn("t5", "ana", "", 5) // not a turn
	next := SimpleRun("t1", "ana", contracts.RunCompleted, 2, at(6))
	next.SessionID = "trip" // later checkpoints keep it
	mustSave(t, s, next)

	cases := []listCase{
		{"user's session", memory.Filter{UserID: "ana", SessionID: "trip"}, []string{"t1", "t4"}},
		{"last turn", memory.Filter{UserID: "ana", SessionID: "trip", Limit: 1}, []string{"t1"}},
		{"other user's session", memory.Filter{UserID: "bo", SessionID: "trip"}, []string{"t2"}},
		{"in a session", memory.Filter{UserID: "ana", InSession: true}, []string{"t1", "t4", "t3"}},
		{"no such session", memory.Filter{UserID: "ana", SessionID: "nope"}, []string{}},
	}
	for _, tc := range cases {
		for _, r := range listed(t, s, tc) {
			if r.SessionID == "" {
				t.Fatalf("%s: summary %s lacks its session id", tc.name, r.ID)
			}
		}
	}
}
