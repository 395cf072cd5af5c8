package agent

import (
	"context"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// A planned run whose plan no longer checks against the catalog when it
// executes (its tool is gone) fails closed with CodePlanFailed, and no
// tool is called.
func TestExecuteFailsAPlanThatNoLongerChecks(t *testing.T) {
	ctx := context.Background()
	st := newStore()
	run, err := New(Config{}, Deps{Tools: newTools(t, notesTool()), Store: st}).Plan(ctx, Request{Plan: mustPlan(t, `{"version":"1.0","goal":"w","timezone":"UTC","actions":[
	 {"id":"a1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_url"],"inputs":{"title":"N"}}]}`)})
	wantStatus(t, run, err, contracts.RunReady)
	other := newTools(t, chatTool())
	run, err = New(Config{}, Deps{Tools: other, Store: st}).Execute(ctx, run.ID)
	wantStatus(t, run, err, contracts.RunFailed)
	if run.Error.Code != contracts.CodePlanFailed || len(other.Calls("")) != 0 {
		t.Fatalf("error %+v, calls %v", run.Error, other.Calls(""))
	}
	if stored, _ := st.Load(ctx, run.ID); stored.Status != contracts.RunFailed {
		t.Fatalf("stored %s", stored.Status)
	}
}
