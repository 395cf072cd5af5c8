package contracts

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// RunDelta is one entry of a run's append-only log: what changed at one
// step boundary. The first entry of a run (and the one a compacted log
// starts with) carries the whole run in Run; every later one carries the
// run's header as it now is (status, counters and usage, interrupt,
// result, error — nil there means none), the goal only when it changed
// since the entry before (a clarification's answers; a goal is up to
// 10,000 bytes, too much to repeat at every step), and only the records
// appended since the entry before: plan versions (with the policy of the
// newest), step and decision records, and the state keys those steps
// produced. Its size does not grow with the run's length, and folding a
// run's entries in order with Apply rebuilds the run exactly. Entries
// written before the goal was left out carry it every time; Apply reads
// them the same.
type RunDelta struct {
	Seq       int64     `json:"seq"`
	UpdatedAt time.Time `json:"updated_at"`
	Run       *Run      `json:"run,omitempty"` // a whole run: the first entry, or a compacted log's base

	Status      RunStatus                  `json:"status,omitempty"`
	Goal        string                     `json:"goal,omitempty"` // the new goal; "" when unchanged
	ReplanCount int                        `json:"replan_count,omitempty"`
	LLMCalls    map[string]int             `json:"llm_calls,omitempty"`
	Usage       RunUsage                   `json:"usage,omitzero"`
	Interrupt   *Interrupt                 `json:"interrupt,omitempty"`
	Result      *RunResult                 `json:"result,omitempty"`
	Error       *Error                     `json:"error,omitempty"`
	Plans       []PlanRevision             `json:"plans,omitempty"`
	Policy      map[string]PolicyDecision  `json:"policy,omitempty"` // replaces the run's when Plans is set
	State       map[string]json.RawMessage `json:"state,omitempty"`
	Steps       []StepRecord               `json:"steps,omitempty"`
	Decisions   []DecisionRecord           `json:"decisions,omitempty"`
}

// runLogMark is how much of a run its log already holds: the counts of
// its append-only lists at the last entry, and its goal then. Delta
// leaves those out.
type runLogMark struct {
	logged                  bool
	plans, steps, decisions int
	goal                    string
}

// Delta is the log entry that takes the run from its last logged entry
// to its current value, numbered run.Seq. A run never logged (new, or
// built by hand) gives a whole-run entry. The entry shares memory with run:
// encode it before changing the run again.
func (r *Run) Delta() *RunDelta {
	d := new(RunDelta)
	r.fillDelta(d, true)
	return d
}

// AppendDelta appends r.Delta() as AppendJSON encodes it, without keeping
// the entry, unless it is a whole-run entry (whole): a store encodes a
// whole run as a checkpoint (memory.NewEntry), and nothing is appended.
func (r *Run) AppendDelta(b []byte) (_ []byte, whole bool, err error) {
	var d RunDelta
	r.fillDelta(&d, false)
	if d.Run != nil {
		return b, true, nil
	}
	out, err := d.appendJSON(b, r.producedKeys(d.Steps), r.State)
	if err != nil {
		out, err = r.Delta().appendMarshal(b) // for encoding/json's error
	}
	return out, false, err
}

// fillDelta sets d to r.Delta(), but for State unless withState.
func (r *Run) fillDelta(d *RunDelta, withState bool) {
	d.Seq, d.UpdatedAt = r.Seq, r.UpdatedAt
	m := r.logMark
	if !m.logged || m.plans > len(r.Plans) || m.steps > len(r.Steps) || m.decisions > len(r.Decisions) {
		whole := *r
		d.Run = &whole
		return
	}
	d.Status, d.ReplanCount, d.LLMCalls, d.Usage = r.Status, r.ReplanCount, r.LLMCalls, r.Usage
	if r.Goal != m.goal {
		d.Goal = r.Goal
	}
	d.Interrupt, d.Result, d.Error = r.Interrupt, r.Result, r.Error
	if len(r.Plans) > m.plans {
		d.Plans, d.Policy = r.Plans[m.plans:], r.Policy
		if d.Policy == nil {
			d.Policy = map[string]PolicyDecision{}
		}
	}
	d.Steps, d.Decisions = r.Steps[m.steps:], r.Decisions[m.decisions:]
	if len(d.Steps) == 0 {
		d.Steps = nil
	}
	if len(d.Decisions) == 0 {
		d.Decisions = nil
	}
	if !withState {
		return
	}
	for _, k := range r.producedKeys(d.Steps) {
		if d.State == nil {
			d.State = map[string]json.RawMessage{}
		}
		d.State[k] = r.State[k]
	}
}

// producedKeys are the state keys steps produced that the state holds,
// sorted, each once: the state an entry carries.
func (r *Run) producedKeys(steps []StepRecord) []string {
	var keys []string
	for _, s := range steps {
		for _, k := range s.Produced {
			if _, ok := r.State[k]; ok {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// MarkLogged records that the run's log holds the run as it is now: a
// store calls it after writing Delta, and after loading the run.
func (r *Run) MarkLogged() {
	r.logMark = runLogMark{logged: true, plans: len(r.Plans), steps: len(r.Steps), decisions: len(r.Decisions), goal: r.Goal}
}

// Apply folds entry d into the run, which must hold entries up to
// d.Seq-1 (a whole-run entry replaces the run, whatever it held). The run
// is then marked logged.
func (r *Run) Apply(d *RunDelta) error {
	if d.Run != nil {
		*r = *d.Run
		r.Seq = d.Seq
		r.MarkLogged()
		return nil
	}
	if d.Seq != r.Seq+1 {
		return Errorf(CodeCheckpointFormat, "run %q: log entry %d follows entry %d", r.ID, d.Seq, r.Seq).
			With("run_id", r.ID).With("seq", d.Seq)
	}
	r.Seq, r.UpdatedAt = d.Seq, d.UpdatedAt
	r.Status, r.ReplanCount = d.Status, d.ReplanCount
	if d.Goal != "" {
		r.Goal = d.Goal
	}
	r.LLMCalls, r.Usage = maps.Clone(d.LLMCalls), d.Usage.Clone()
	r.Interrupt, r.Result, r.Error = d.Interrupt, d.Result, d.Error
	if len(d.Plans) > 0 {
		r.Plans = append(r.Plans, d.Plans...)
		r.Policy = d.Policy
	}
	r.Steps = append(r.Steps, d.Steps...)
	r.Decisions = append(r.Decisions, d.Decisions...)
	if len(d.State) > 0 {
		if r.State == nil {
			r.State = make(map[string]json.RawMessage, len(d.State))
		}
		maps.Copy(r.State, d.State)
	}
	r.MarkLogged()
	return nil
}

// FoldRun rebuilds a run from its log entries in sequence order; the first
// must be a whole-run entry.
func FoldRun(entries []RunDelta) (*Run, error) {
	if len(entries) == 0 || entries[0].Run == nil {
		return nil, Errorf(CodeCheckpointFormat, "a run log must start with a whole run")
	}
	run := &Run{}
	for i := range entries {
		if err := run.Apply(&entries[i]); err != nil {
			return nil, err
		}
	}
	return run, nil
}

// Kind names what an entry records, for event streams and replays:
// created (a whole run), plan, decision, step, interrupted, or the run's
// status when nothing else changed.
func (d *RunDelta) Kind() string {
	switch {
	case d.Run != nil && d.Seq == 1:
		return "created"
	case d.Run != nil:
		return "snapshot"
	case len(d.Decisions) > 0:
		return "decision"
	case d.Interrupt != nil:
		return "interrupted"
	case len(d.Plans) > 0:
		return "plan"
	case len(d.Steps) > 0 && !d.Status.Final():
		return "step"
	}
	return string(d.Status)
}

// Summary is one line saying what the entry changed, for a person.
func (d *RunDelta) Summary() string {
	if d.Run != nil {
		return fmt.Sprintf("%s %q: %s, %d steps", d.Kind(), d.Run.Goal, d.Run.Status, len(d.Run.Steps))
	}
	var parts []string
	for _, p := range d.Plans {
		parts = append(parts, fmt.Sprintf("plan v%d (%s, %d actions)", p.Version, p.Source, len(p.Plan.Actions)))
	}
	for _, dec := range d.Decisions {
		parts = append(parts, fmt.Sprintf("%s %s by %s", dec.Interrupt.Kind, dec.Decision.Kind, dec.Decision.By))
	}
	for _, s := range d.Steps {
		line := fmt.Sprintf("%s %s attempt %d %s", s.ActionID, s.Tool, s.Attempt, s.Status)
		if s.Error != nil {
			line += fmt.Sprintf(" (%d %s)", s.Error.Code, s.Error.Message)
		}
		parts = append(parts, line)
	}
	if d.Interrupt != nil {
		parts = append(parts, fmt.Sprintf("waits: %s %s", d.Interrupt.Kind, d.Interrupt.Message))
	}
	if d.Error != nil && d.Status.Final() {
		parts = append(parts, fmt.Sprintf("error %d %s", d.Error.Code, d.Error.Message))
	}
	parts = append(parts, "status "+string(d.Status))
	return strings.Join(slices.Compact(parts), "; ")
}
