package agent

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// The planner and the composer are told the current date and time in the
// user's timezone, so "tomorrow at 3 pm" resolves against the user's
// today: 23:30 UTC on a Sunday is already Monday morning in Seoul.
func TestModelsSeeNowInTheUsersTimezone(t *testing.T) {
	m, srv := scripted(t,
		planner(`{"version":"1.0","goal":"note","timezone":"Asia/Seoul","actions":[
		 {"id":"n","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_id","page_url"],"inputs":{"title":"meeting"}}]}`),
		composer("Noted."))
	e := New(Config{}, Deps{Tools: newTools(t, notesTool()), LLM: m})
	e.now = func() time.Time { return time.Date(2026, 11, 29, 23, 30, 0, 0, time.UTC) }
	run, err := e.Run(context.Background(), Request{Goal: "book the meeting tomorrow at 3 pm",
		Options: contracts.RunOptions{Timezone: "Asia/Seoul", AutoApprove: true}})
	wantStatus(t, run, err, contracts.RunCompleted)
	for _, req := range srv.Requests() {
		var in struct{ Now, Timezone string }
		if err := json.Unmarshal([]byte(req.Messages[len(req.Messages)-1].Content), &in); err != nil {
			t.Fatalf("%s input: %v", req.Role, err)
		}
		if in.Now != "2026-11-30T08:30:00+09:00 (Monday)" || in.Timezone != "Asia/Seoul" {
			t.Errorf("%s sees now %q in %q, want Monday 08:30 in Seoul", req.Role, in.Now, in.Timezone)
		}
	}
	if srv.Count("planner") != 1 || srv.Count("composer") != 1 {
		t.Fatalf("calls: planner %d, composer %d", srv.Count("planner"), srv.Count("composer"))
	}
}
