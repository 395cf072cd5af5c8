package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testbuild"
	"github.com/ordo-run/ordo/internal/testwait"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/plugins/sdk"
)

const movePlan = `{"version":"1.0","goal":"move the report","timezone":"UTC","actions":[
 {"id":"m1","tool":"pin.move","intent":"write","requires":[],"produces":["moved_to"],"inputs":{"from":"a.txt","to":"b.txt"}}]}`

// pinVariants builds agent/testdata/pinplugin once per contract variant
// (see its doc), into one directory: variant name -> binary.
func pinVariants(t *testing.T, variants ...string) map[string]string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and starts plugin binaries")
	}
	dir := t.TempDir()
	out := map[string]string{}
	for _, v := range variants {
		bin := filepath.Join(dir, v)
		if err := testbuild.Build(bin, "-ldflags=-X main.variant="+v, "./agent/testdata/pinplugin"); err != nil {
			t.Fatal(err)
		}
		out[v] = bin
	}
	return out
}

// pinDir is a watched plugins directory serving the plugin pin.
type pinDir struct {
	t   *testing.T
	dir string
}

// install puts bin in the directory as plugin pin (renamed into place,
// so the watcher never reads half a binary) and waits until the host h
// serves a pin.move whose contract differs from the one it had.
func (d pinDir) install(h *host.Host, bin string) *contracts.Tool {
	d.t.Helper()
	before := ""
	if t, ok := h.Lookup("pin.move"); ok {
		before = t.Hash()
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		d.t.Fatal(err)
	}
	tmp := filepath.Join(d.dir, ".pin.tmp")
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		d.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(d.dir, "ordo-plugin-pin")); err != nil {
		d.t.Fatal(err)
	}
	var now *contracts.Tool
	testwait.Until(d.t, 60*time.Second, "the new pin.move", func() bool {
		t, ok := h.Lookup("pin.move")
		now = t
		return ok && t.Hash() != before
	})
	return now
}

// host starts a host on the directory (another server sharing it).
func (d pinDir) host() *host.Host {
	d.t.Helper()
	h, err := host.New(host.WithPluginsDir(d.dir), host.WithDataDir(d.t.TempDir()), host.WithStartTimeout(30*time.Second))
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { h.Close() })
	return h
}

// The hole: a plan a person approved must not run against a tool
// contract nobody approved. A real plugin binary is replaced between
// approval and execution, keeping its risk and tags.
func TestContractPinWithRealPlugin(t *testing.T) {
	bins := pinVariants(t, "base", "desc", "schema", "broken")
	ctx := context.Background()
	setup := func(t *testing.T) (pinDir, *host.Host) {
		d := pinDir{t, t.TempDir()}
		h := d.host()
		d.install(h, bins["base"])
		return d, h
	}

	// Approved, then the description changes: the approval's resume stops
	// at contract_changed saying what changed, and no tool runs; another
	// server (its own host on the same plugins) takes the approval of the
	// change, which re-pins the plan as a new version and runs it.
	t.Run("approved plan asks again", func(t *testing.T) {
		d, h := setup(t)
		base, _ := h.Lookup("pin.move")
		st := newStore()
		run, err := fresh(Config{HITL: hitlOn}, h, st).Plan(ctx, Request{Plan: mustPlan(t, movePlan), UserID: "u1"})
		wantStatus(t, run, err, contracts.RunInterrupted)
		if got := run.Plans[0].Pins["pin.move"]; got.Hash != base.Hash() || len(got.Parts) != len(contracts.PinParts) {
			t.Fatalf("pins %+v, want the base contract's %s", run.Plans[0].Pins, base.Hash())
		}
		changed := d.install(h, bins["desc"])
		run, err = fresh(Config{HITL: hitlOn}, h, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1", Seq: run.Seq})
		wantStatus(t, run, err, contracts.RunInterrupted)
		in := run.Interrupt
		if in.Kind != contracts.InterruptContractChanged || len(in.Changes) != 1 || len(run.Steps) != 0 {
			t.Fatalf("interrupt %+v, steps %+v", in, run.Steps)
		}
		c := in.Changes[0]
		if c.Tool != "pin.move" || !slices.Equal(c.Actions, []string{"m1"}) || !slices.Equal(c.Fields, []string{contracts.PartDescription}) ||
			c.Old.Hash != base.Hash() || c.New.Hash != changed.Hash() || !strings.Contains(c.Description, "deletes the source") ||
			!strings.Contains(in.Message, "pin.move (description)") || in.PlanVersion != 1 {
			t.Fatalf("change %+v, message %q", c, in.Message)
		}
		if !slices.Equal(Decisions(in.Kind), []contracts.DecisionKind{contracts.DecisionApprove, contracts.DecisionEdit, contracts.DecisionReject}) {
			t.Fatalf("decisions %v", Decisions(in.Kind))
		}
		other := d.host()
		testwait.Until(t, 60*time.Second, "the other server's pin.move", func() bool {
			t, ok := other.Lookup("pin.move")
			return ok && t.Hash() == changed.Hash()
		})
		run, err = fresh(Config{HITL: hitlOn}, other, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1", Seq: run.Seq})
		wantStatus(t, run, err, contracts.RunCompleted)
		if len(run.Plans) != 2 || run.Plans[1].Source != SourceRepin || run.Plans[1].Pins["pin.move"].Hash != changed.Hash() ||
			len(run.Steps) != 1 || run.Steps[0].PlanVersion != 2 || stateOf(t, run, "moved_to") != "b.txt" {
			t.Fatalf("plans %+v, steps %+v", run.Plans, run.Steps)
		}
	})

	// Unchanged contracts ask nothing more: approved on one server, run on
	// another whose plugin is the same binary.
	t.Run("unchanged contract asks nothing", func(t *testing.T) {
		d, h := setup(t)
		st := newStore()
		run, err := fresh(Config{HITL: hitlOn}, h, st).Plan(ctx, Request{Plan: mustPlan(t, movePlan)})
		wantStatus(t, run, err, contracts.RunInterrupted)
		other := d.host()
		testwait.Until(t, 60*time.Second, "the other server's pin.move", func() bool { _, ok := other.Lookup("pin.move"); return ok })
		run, err = fresh(Config{HITL: hitlOn}, other, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
		wantStatus(t, run, err, contracts.RunCompleted)
		if len(run.Plans) != 1 || len(run.Decisions) != 1 {
			t.Fatalf("plans %d, decisions %+v", len(run.Plans), run.Decisions)
		}
	})

	// Nobody approved anything: a changed schema that still checks is
	// re-pinned (a new plan version saying why) and runs.
	t.Run("unapproved change re-pins", func(t *testing.T) {
		d, h := setup(t)
		st := newStore()
		run, err := fresh(Config{}, h, st).Plan(ctx, Request{Plan: mustPlan(t, movePlan)})
		wantStatus(t, run, err, contracts.RunReady)
		changed := d.install(h, bins["schema"])
		run, err = fresh(Config{}, h, st).Execute(ctx, run.ID)
		wantStatus(t, run, err, contracts.RunCompleted)
		rev := run.Plans[len(run.Plans)-1]
		if len(run.Plans) != 2 || rev.Source != SourceRepin || rev.Pins["pin.move"].Hash != changed.Hash() ||
			!strings.Contains(rev.Reason, "pin.move (input_schema)") || len(run.Decisions) != 0 {
			t.Fatalf("plans %+v, decisions %+v", run.Plans, run.Decisions)
		}
	})

	// A change the plan no longer checks against (moved_to is no longer
	// produced) fails the step with 4007 naming the change; nothing runs.
	t.Run("breaking change fails the step", func(t *testing.T) {
		d, h := setup(t)
		st := newStore()
		run, err := fresh(Config{OnFailure: contracts.OnFailureFail}, h, st).Plan(ctx, Request{Plan: mustPlan(t, movePlan)})
		wantStatus(t, run, err, contracts.RunReady)
		d.install(h, bins["broken"])
		run, err = fresh(Config{OnFailure: contracts.OnFailureFail}, h, st).Execute(ctx, run.ID)
		wantStatus(t, run, err, contracts.RunFailed)
		if run.Error.Code != contracts.CodeContractChanged || run.Error.Details["action"] != "m1" || len(run.Steps) != 1 ||
			run.Steps[0].Status != contracts.StepFailed || run.Steps[0].Error.Code != contracts.CodeContractChanged {
			t.Fatalf("error %+v, steps %+v", run.Error, run.Steps)
		}
		if f, _ := run.Error.Details["fields"].([]string); !slices.Equal(f, []string{contracts.PartOutputSchema}) {
			t.Fatalf("fields %#v", run.Error.Details["fields"])
		}
	})
}

// pinHost is a real host whose source pin serves move (in process), so a
// test can change pin.move's contract at any moment (swap).
func pinHost(t *testing.T, others ...sdk.Tool) (*host.Host, func(desc string)) {
	t.Helper()
	ctx := context.Background()
	h, err := host.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	p, err := host.InProcess(others...)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddProvider(ctx, "others", "1", p); err != nil {
		t.Fatal(err)
	}
	n := 0
	swap := func(desc string) {
		t.Helper()
		n++
		if n > 1 {
			if err := h.RemoveSource(ctx, "pin"); err != nil {
				t.Fatal(err)
			}
		}
		p, err := host.InProcess(moveTool(desc, func(_ context.Context, c sdk.Call) (any, error) { return map[string]any{"moved": c.Payload["to"]}, nil }))
		if err != nil {
			t.Fatal(err)
		}
		if err := h.AddProvider(ctx, "pin", "v"+string(rune('0'+n)), p); err != nil {
			t.Fatal(err)
		}
	}
	swap("Moves a file.")
	return h, swap
}

// moveTool is pin.move described as desc, served by h.
func moveTool(desc string, h sdk.Handler) sdk.Tool {
	move := tool("pin.move", contracts.RiskWrite, `{"type":"object","required":["from","to"],"properties":{"from":{"type":"string"},"to":{"type":"string"}}}`,
		`{"type":"object","required":["moved"],"properties":{"moved":{"type":"string"}}}`, map[string]string{"moved_to": "$.moved"}, h)
	move.Contract.Description = desc
	return move
}

const notesMovePlan = `{"version":"1.0","goal":"note, then move","timezone":"UTC","actions":[
 {"id":"n1","tool":"notes.create_page","intent":"write","requires":[],"produces":["page_url"],"inputs":{"title":"N"}},
 {"id":"m1","tool":"pin.move","intent":"write","requires":["page_url"],"produces":["moved_to"],"inputs":{"from":"a.txt","to":"b.txt"}}]}`

// Before each step, not only when a stored plan is loaded: a contract
// that changes while the run executes (here during the step before) is
// found before the call. Approved plans ask (only about the actions not
// done); unapproved ones re-pin the remaining actions.
func TestContractChangeWhileRunning(t *testing.T) {
	ctx := context.Background()
	for _, approved := range []bool{true, false} {
		var swap func(string)
		notes := notesTool()
		notes.Handler = func(context.Context, sdk.Call) (any, error) {
			swap("Moves a file, and deletes the source.")
			return map[string]any{"id": "p1", "url": "https://notes.local/p1"}, nil
		}
		h, s := pinHost(t, notes)
		swap = s
		cfg := Config{}
		if approved {
			cfg.HITL = hitlOn
		}
		st := newStore()
		run, err := fresh(cfg, h, st).Run(ctx, Request{Plan: mustPlan(t, notesMovePlan)})
		if approved {
			wantStatus(t, run, err, contracts.RunInterrupted)
			run, err = fresh(cfg, h, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
			wantStatus(t, run, err, contracts.RunInterrupted)
			if in := run.Interrupt; in.Kind != contracts.InterruptContractChanged || !slices.Equal(in.Changes[0].Actions, []string{"m1"}) ||
				len(run.Steps) != 1 || run.Steps[0].ActionID != "n1" {
				t.Fatalf("interrupt %+v, steps %+v", in, run.Steps)
			}
			run, err = fresh(cfg, h, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
		}
		wantStatus(t, run, err, contracts.RunCompleted)
		rev := run.Plans[len(run.Plans)-1]
		if len(run.Plans) != 2 || rev.Source != SourceRepin || len(rev.Plan.Actions) != 1 || rev.Plan.Actions[0].ID != "m1" ||
			len(run.Steps) != 2 || run.Steps[1].PlanVersion != 2 {
			t.Fatalf("approved %v: plans %+v, steps %+v", approved, run.Plans, run.Steps)
		}
	}
}

// A step a person approved (step approval, or policy's confirmation) is
// asked about again when its tool's contract changed before it runs; the
// approval of the change re-pins, and the step is asked about again under
// the new contract (approvals hold for one plan version). Reject ends it.
func TestContractChangedAfterStepApproval(t *testing.T) {
	ctx := context.Background()
	h, swap := pinHost(t)
	cfg := Config{HITL: contracts.HITLSwitches{Enabled: true, StepApproval: true}}
	st := newStore()
	run, err := fresh(cfg, h, st).Run(ctx, Request{Plan: mustPlan(t, movePlan)})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Kind != contracts.InterruptStepApproval {
		t.Fatalf("interrupt %+v", run.Interrupt)
	}
	swap("Moves a file, and deletes the source.")
	run, err = fresh(cfg, h, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Kind != contracts.InterruptContractChanged || len(run.Steps) != 0 {
		t.Fatalf("interrupt %+v, steps %+v", run.Interrupt, run.Steps)
	}
	if _, err := fresh(cfg, h, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionSkip}); contracts.CodeOf(err) != contracts.CodeInvalidDecision {
		t.Fatalf("skip at contract_changed: %v", err)
	}
	run, err = fresh(cfg, h, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Kind != contracts.InterruptStepApproval || run.Interrupt.PlanVersion != 2 {
		t.Fatalf("interrupt %+v", run.Interrupt)
	}
	swap("Moves a file, and deletes the source, and more.")
	run, err = fresh(cfg, h, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
	wantStatus(t, run, err, contracts.RunInterrupted)
	if run.Interrupt.Kind != contracts.InterruptContractChanged || run.Interrupt.PlanVersion != 2 {
		t.Fatalf("interrupt %+v", run.Interrupt)
	}
	run, err = fresh(cfg, h, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionReject, By: "u1"})
	wantStatus(t, run, err, contracts.RunRejected)
	if len(run.Steps) != 0 {
		t.Fatalf("steps %+v", run.Steps)
	}
}

// A run checkpointed by an older build has no pins: it loads and runs,
// pinned to the contracts as they are when it is loaded.
func TestRunWithoutPinsRuns(t *testing.T) {
	ctx := context.Background()
	h, swap := pinHost(t)
	planned, err := fresh(Config{HITL: hitlOn}, h, newStore()).Plan(ctx, Request{Plan: mustPlan(t, movePlan)})
	wantStatus(t, planned, err, contracts.RunInterrupted)
	b, err := json.Marshal(planned)
	if err != nil {
		t.Fatal(err)
	}
	var old contracts.Run
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	old.Plans[0].Pins, old.Seq = nil, 1
	st := memory.NewMemStore()
	if err := st.Save(ctx, &old); err != nil {
		t.Fatal(err)
	}
	swap("Moves a file, and deletes the source.")
	run, err := fresh(Config{HITL: hitlOn}, h, st).Resume(ctx, old.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
	wantStatus(t, run, err, contracts.RunCompleted)
	if len(run.Plans) != 1 || run.Plans[0].Pins != nil {
		t.Fatalf("plans %+v", run.Plans)
	}
}

// keyJournal is a tool that honours idempotency keys as the bundled
// plugins do: the first call with a key has the effect and records its
// result; a repeat answers the record and does nothing.
type keyJournal struct {
	mu      sync.Mutex
	results map[string]any
	keys    []string      // every call's key, in order
	effects int           // the effects had
	entered chan struct{} // closed by the first call, which then waits for release
	release chan struct{}
}

func newKeyJournal() *keyJournal {
	return &keyJournal{results: map[string]any{}, entered: make(chan struct{}), release: make(chan struct{})}
}

func (j *keyJournal) move(_ context.Context, c sdk.Call) (any, error) {
	j.mu.Lock()
	j.keys = append(j.keys, c.IdempotencyKey)
	r, seen := j.results[c.IdempotencyKey]
	if !seen {
		r = map[string]any{"moved": c.Payload["to"]}
		j.results[c.IdempotencyKey] = r
		j.effects++
	}
	first := len(j.keys) == 1
	j.mu.Unlock()
	if first {
		close(j.entered)
		<-j.release // the "crashed" process never answers in time
	}
	return r, nil
}

// moveHost is a real host serving pin.move described as desc.
func moveHost(t *testing.T, desc string, h sdk.Handler) *host.Host {
	t.Helper()
	hs, err := host.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hs.Close() })
	p, err := host.InProcess(moveTool(desc, h))
	if err != nil {
		t.Fatal(err)
	}
	if err := hs.AddProvider(context.Background(), "pin", "1", p); err != nil {
		t.Fatal(err)
	}
	return hs
}

// A call in flight when its process stopped, whose tool's contract then
// changed compatibly (nobody approved anything: the recovery re-pins the
// plan as a new version), is re-issued under the key it had, so the
// tool's journal answers it and the effect happens once.
func TestRepinKeepsInFlightKey(t *testing.T) {
	ctx := context.Background()
	j := newKeyJournal()
	before := moveHost(t, "Moves a file.", j.move)
	after := moveHost(t, "Moves a file to its new name.", j.move)
	store := newStore()
	crashed := make(chan error, 1)
	go func() {
		// Without leases: it stands for a process that stopped renewing.
		_, err := fresh(Config{}, before, struct{ memory.Checkpointer }{store}).Run(ctx, Request{Plan: mustPlan(t, movePlan)})
		crashed <- err
	}()
	<-j.entered
	runs, err := store.List(ctx, memory.Filter{})
	if err != nil || len(runs) != 1 || runs[0].Status != contracts.RunRunning {
		t.Fatalf("runs=%+v err=%v", runs, err)
	}
	run, err := fresh(Config{}, after, store).Resume(ctx, runs[0].ID, contracts.Decision{})
	wantStatus(t, run, err, contracts.RunCompleted)
	close(j.release)
	if err := <-crashed; contracts.CodeOf(err) != contracts.CodeSequenceConflict {
		t.Fatalf("the stale engine was not stopped: %v", err)
	}
	if want := run.ID + "/v1/m1/1"; len(j.keys) != 2 || j.keys[0] != want || j.keys[1] != want || run.Steps[0].IdempotencyKey != want || j.effects != 1 {
		t.Fatalf("keys %v (want %s twice), recorded %s, effects %d", j.keys, want, run.Steps[0].IdempotencyKey, j.effects)
	}
	rev := run.Plans[len(run.Plans)-1]
	if len(run.Plans) != 2 || rev.Source != SourceRepin || rev.KeysFrom != 1 || len(run.Steps) != 1 || run.Steps[0].PlanVersion != 2 {
		t.Fatalf("plans %+v, steps %+v", run.Plans, run.Steps)
	}
}

// An approved change re-pins under the keys the plan had; an edit of the
// action makes a new plan version and new keys: it is another call.
func TestEditedActionGetsNewKey(t *testing.T) {
	ctx := context.Background()
	for _, edit := range []bool{false, true} {
		var keys []string
		h, swap := pinHost(t)
		st := newStore()
		run, err := fresh(Config{HITL: hitlOn}, h, st).Run(ctx, Request{Plan: mustPlan(t, movePlan)})
		wantStatus(t, run, err, contracts.RunInterrupted)
		swap("Moves a file to its new name.")
		run, err = fresh(Config{HITL: hitlOn}, h, st).Resume(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"})
		wantStatus(t, run, err, contracts.RunInterrupted)
		if run.Interrupt.Kind != contracts.InterruptContractChanged {
			t.Fatalf("interrupt %+v", run.Interrupt)
		}
		d := contracts.Decision{Kind: contracts.DecisionApprove, By: "u1"}
		if edit {
			p := mustPlan(t, strings.Replace(movePlan, "b.txt", "c.txt", 1))
			d = contracts.Decision{Kind: contracts.DecisionEdit, By: "u1", Plan: p}
		}
		run, err = fresh(Config{HITL: hitlOn}, h, st).Resume(ctx, run.ID, d)
		wantStatus(t, run, err, contracts.RunCompleted)
		for _, s := range run.Steps {
			keys = append(keys, s.IdempotencyKey)
		}
		want, source := run.ID+"/v1/m1/1", SourceRepin
		if edit {
			want, source = run.ID+"/v2/m1/1", "edit"
		}
		if len(run.Plans) != 2 || run.Plans[1].Source != source || !slices.Equal(keys, []string{want}) {
			t.Fatalf("edit %v: plans %+v, keys %v, want %s", edit, run.Plans, keys, want)
		}
	}
}

// Keys by plan version: a chain of re-pins keeps the first version's and
// counts on from the attempts made in each; an edit starts afresh; a
// re-pin an older build wrote (no KeysFrom) keeps the key it used then.
func TestStepKeyAcrossRepins(t *testing.T) {
	run := &contracts.Run{ID: "r", Plans: []contracts.PlanRevision{
		{Version: 1, Source: "planner"},
		{Version: 2, Source: SourceRepin, KeysFrom: 1},
		{Version: 3, Source: SourceRepin, KeysFrom: 1},
		{Version: 4, Source: "edit"},
		{Version: 5, Source: SourceRepin}, // an older build's
	}, Steps: []contracts.StepRecord{
		{ActionID: "m1", PlanVersion: 1, Attempt: 1, Status: contracts.StepFailed},
		{ActionID: "m1", PlanVersion: 1, Attempt: 2, Status: contracts.StepFailed},
		{ActionID: "m1", PlanVersion: 2, Attempt: 1, Status: contracts.StepFailed},
		{ActionID: "n1", PlanVersion: 2, Attempt: 1, Status: contracts.StepFailed},
	}}
	for _, c := range []struct {
		version, attempt int
		want             string
	}{
		{1, 3, "r/v1/m1/3"}, {2, 2, "r/v1/m1/4"}, {3, 1, "r/v1/m1/4"}, {4, 1, "r/v4/m1/1"}, {5, 1, "r/v5/m1/1"},
	} {
		if got := stepKey(run, c.version, "m1", c.attempt); got != c.want {
			t.Errorf("version %d attempt %d: key %s, want %s", c.version, c.attempt, got, c.want)
		}
	}
}
