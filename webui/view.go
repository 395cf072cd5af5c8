package webui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// maxShown bounds each payload, result and state value shown on a run
// page, so a run of hundreds of steps stays a page of a few hundred KB.
const maxShown = 1500

// runView is what the run page shows.
type runView struct {
	Run       *contracts.Run
	Plan      *contracts.PlanRevision // current; nil before planning
	Graph     graphView
	Steps     []stepView
	State     []stateView
	LLM       []roleCount
	Interrupt *interruptView
	Versions  []contracts.PlanRevision // all, when there is more than one
	Kinds     string                   // the event names to listen for
	Final     bool
	Steer     steerView
}

// steerView is what a person may ask of the run as it stands: pause a
// moving run, cancel an unfinished one, retry a failed or cancelled one.
type steerView struct{ Pause, Cancel, Retry bool }

// steerable mirrors the engine's own checks (agent.Engine.Pause, Cancel,
// Retry) so the page offers only what would be accepted.
func steerable(run *contracts.Run) steerView {
	waits := run.Interrupt != nil
	return steerView{
		Pause:  !run.Status.Final() && !waits && len(run.Plans) > 0,
		Cancel: !run.Status.Final(),
		Retry:  run.Status == contracts.RunFailed || run.Status == contracts.RunCancelled,
	}
}

type stepView struct {
	contracts.StepRecord
	Duration string
	Payload  string
	Result   string
	Forkable bool // a finished step of the current plan: "Fork from here"
}

type stateView struct{ Key, Value string }

// roleCount is one role's model calls and what they used.
type roleCount struct {
	Role  string
	Calls int
	Usage contracts.TokenUsage
}

// interruptView is the waiting interrupt and one form per decision it
// accepts (agent.Decisions), so a new kind of interrupt gets its forms
// with no change here.
type interruptView struct {
	*contracts.Interrupt
	Seq     int64 // the run's sequence at the interrupt: the forms send it (Decision.Seq)
	Payload string
	Forms   []decisionForm
}

type decisionForm struct {
	Decision string
	Label    string
	Plan     string     // edit a plan: the current one, to change
	Payload  string     // edit a payload: the bound one
	Fields   []ansField // answers
	Limit    bool       // a budget's new limit
	Primary  bool
}

type ansField struct {
	Name       string
	Suggestion string
	Secret     bool // typed unseen, never prefilled
}

func newRunView(run *contracts.Run) *runView {
	v := &runView{Run: run, Final: run.Status.Final(), Kinds: strings.Join(eventKinds(), " ")}
	if n := len(run.Plans); n > 0 {
		v.Plan = &run.Plans[n-1]
		if n > 1 {
			v.Versions = run.Plans
		}
	}
	for _, s := range run.Steps {
		sv := stepView{StepRecord: s, Payload: shown(s.Payload), Result: shown(s.Result)}
		if !s.EndedAt.IsZero() {
			sv.Duration = s.EndedAt.Sub(s.StartedAt).Round(time.Millisecond).String()
		}
		sv.Forkable = v.Plan != nil && s.PlanVersion == v.Plan.Version && s.Status != contracts.StepStarted
		v.Steps = append(v.Steps, sv)
	}
	for _, k := range stateKeys(run) {
		v.State = append(v.State, stateView{k, shown(run.State[k])})
	}
	for _, role := range slices.Sorted(maps.Keys(run.LLMCalls)) {
		v.LLM = append(v.LLM, roleCount{role, run.LLMCalls[role], run.Usage.ByRole[role]})
	}
	if v.Plan != nil {
		v.Graph = layout(v.Plan, run)
	}
	if in := run.Interrupt; in != nil {
		v.Interrupt = &interruptView{Interrupt: in, Seq: run.Seq, Payload: shown(in.Payload)}
		for i, d := range agent.Decisions(in.Kind) {
			v.Interrupt.Forms = append(v.Interrupt.Forms, formFor(run, in, d, i == 0))
		}
	}
	return v
}

// formFor is the form of one decision: what it carries follows from the
// decision and what the interrupt holds, not from the interrupt's kind.
func formFor(run *contracts.Run, in *contracts.Interrupt, d contracts.DecisionKind, primary bool) decisionForm {
	f := decisionForm{Decision: string(d), Label: label(d), Primary: primary}
	switch d {
	case decisionRetry: // a failed step's retry may carry an edited payload
		if len(in.Payload) > 0 {
			f.Payload = indent(in.Payload)
		}
	case contracts.DecisionEdit:
		if len(in.Payload) > 0 && in.Kind != contracts.InterruptPlanApproval {
			f.Payload = indent(in.Payload)
		} else if n := len(run.Plans); n > 0 {
			data, _ := json.MarshalIndent(run.Plans[n-1].Plan, "", "  ")
			f.Plan = string(data)
		}
	case contracts.DecisionAnswer:
		for _, q := range in.Questions {
			f.Fields = append(f.Fields, ansField{Name: q, Suggestion: in.Suggestions[q]})
		}
		for _, p := range in.Fields {
			if slices.Contains(in.Secret, p) {
				f.Fields = append(f.Fields, ansField{Name: p, Secret: true})
				continue
			}
			f.Fields = append(f.Fields, ansField{Name: p, Suggestion: in.Suggestions[p]})
		}
		if len(f.Fields) == 0 {
			f.Fields = []ansField{{Name: "answer"}}
		}
	case contracts.DecisionApprove:
		f.Limit = in.Budget != nil
	}
	return f
}

// decisionRetry is step_failed's retry, which takes an edited payload.
const decisionRetry contracts.DecisionKind = "retry"

// label is a decision's button name: a plain word a screen reader says.
func label(d contracts.DecisionKind) string {
	switch d {
	case "replan":
		return "Re-plan"
	}
	s := strings.ReplaceAll(string(d), "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// shown is a stored JSON value as text, cut to maxShown bytes.
func shown(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	s := string(raw)
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s[:cut], len(s))
}

func indent(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// funcs are the page templates' helpers.
var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"pretty": func(v any) string {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(data)
	},
	"join": func(s []string) string { return strings.Join(s, ", ") },
	// dict passes the page with a part of it to a nested template.
	"dict": func(page, part any) map[string]any { return map[string]any{"P": page, "V": part} },
}
