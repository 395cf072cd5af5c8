package console

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// Display prints a run's progress as it happens. Its methods are safe for
// concurrent use (the engine reports parallel steps from one goroutine,
// but the plan and the prompts come from another).
type Display struct {
	mu      sync.Mutex
	w       io.Writer            // the spinner, which writes above its line
	spin    *Spinner             // shows a model call while it lasts
	started map[string]time.Time // action id -> start of its latest attempt
	llmAt   time.Time            // start of the model call under way
	runAt   time.Time
}

// NewDisplay writes progress to w. On a terminal, a spinner shows each
// model call (its role and how long it has taken so far) while it lasts.
func NewDisplay(w io.Writer, terminal bool) *Display {
	spin := NewSpinner(w, terminal)
	return &Display{w: spin, spin: spin, started: map[string]time.Time{}}
}

// Event renders one engine event.
func (d *Display) Event(ev agent.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch ev.Kind {
	case agent.EventLLMStarted:
		d.llmAt = ev.Time
		d.spin.Start("waiting for the " + ev.Message)
	case agent.EventLLMEnded:
		d.spin.Stop()
		fmt.Fprintf(d.w, "  ◆ %-18s model  %s\n", ev.Message, ev.Time.Sub(d.llmAt).Round(time.Millisecond))
	case agent.EventRunStarted:
		d.runAt = ev.Time
		fmt.Fprintf(d.w, "run %s: %s\n", ev.RunID, oneLine(ev.Message))
	case agent.EventStepStarted:
		d.started[ev.ActionID] = ev.Time
		fmt.Fprintf(d.w, "  ▶ %-18s %s\n", ev.ActionID, ev.Tool)
	case agent.EventStepSucceeded:
		fmt.Fprintf(d.w, "  ✓ %-18s %s  %s\n", ev.ActionID, ev.Tool, d.took(ev))
	case agent.EventStepFailed:
		fmt.Fprintf(d.w, "  ✗ %-18s %s  %s  %s\n", ev.ActionID, ev.Tool, d.took(ev), oneLine(ev.Message))
	case agent.EventStepSkipped:
		fmt.Fprintf(d.w, "  – %-18s %s  skipped %s\n", ev.ActionID, ev.Tool, oneLine(ev.Message))
	case agent.EventReplan:
		fmt.Fprintf(d.w, "  ↻ re-plan: %s\n", oneLine(ev.Message))
	case agent.EventInterrupted:
		fmt.Fprintf(d.w, "  ⏸ %s\n", oneLine(ev.Message))
	case agent.EventResumed:
		fmt.Fprintf(d.w, "  ▷ %s\n", oneLine(ev.Message))
	case agent.EventRequested:
		fmt.Fprintf(d.w, "  ⏸ %s\n", oneLine(ev.Message))
	case agent.EventCancelled:
		fmt.Fprintf(d.w, "  ■ stopped: %s\n", oneLine(ev.Message))
	case agent.EventCompleted, agent.EventFailed, agent.EventRejected:
		if d.runAt.IsZero() { // resumed: the run started in another session
			fmt.Fprintf(d.w, "%s\n", ev.Status)
		} else {
			fmt.Fprintf(d.w, "%s after %s\n", ev.Status, ev.Time.Sub(d.runAt).Round(time.Millisecond))
		}
	}
}

func (d *Display) took(ev agent.Event) string {
	if t, ok := d.started[ev.ActionID]; ok {
		return ev.Time.Sub(t).Round(time.Microsecond * 100).String()
	}
	return ""
}

// Plan prints the run's current plan: each action with its tool, what it
// needs and yields, and policy's verdict.
func (d *Display) Plan(run *contracts.Run) {
	if len(run.Plans) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	rev := run.Plans[len(run.Plans)-1]
	fmt.Fprintf(d.w, "plan v%d (%s): %d action(s) in %d level(s)\n", rev.Version, rev.Source, len(rev.Plan.Actions), len(rev.Levels))
	level := map[string]int{}
	for i, ids := range rev.Levels {
		for _, id := range ids {
			level[id] = i + 1
		}
	}
	for _, a := range rev.Plan.Actions {
		verdict := "allow"
		if p, ok := run.Policy[a.ID]; ok {
			verdict = p.Decision
			if p.Reason != "" {
				verdict += " (" + p.Reason + ")"
			}
		}
		fmt.Fprintf(d.w, "  %d. %-18s %-22s %s\n", level[a.ID], a.ID, a.Tool, verdict)
		if len(a.Requires) > 0 || len(a.Produces) > 0 {
			fmt.Fprintf(d.w, "     needs [%s] yields [%s]\n", strings.Join(a.Requires, ", "), strings.Join(a.Produces, ", "))
		}
	}
}

// Summary prints how the run ended: the answer, or the error and how to
// continue.
func (d *Display) Summary(run *contracts.Run) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if run.Error != nil {
		fmt.Fprintf(d.w, "error %d (%s): %s\n", run.Error.Code, run.Error.Code.Category(), oneLine(run.Error.Message))
		for _, k := range slices.Sorted(maps.Keys(run.Error.Details)) {
			fmt.Fprintf(d.w, "  %s: %v\n", k, run.Error.Details[k])
		}
	}
}

// oneLine is an event's text (a goal, a tool's error message: anyone's)
// as one line the terminal only shows.
func oneLine(s string) string { return Clip(s, 200) }

// Clip fits s in one line (a table cell) of at most n bytes: runs of whitespace
// become one space, a cut keeps whole characters, and control and
// bidirectional-format characters become "?" — the text may come from a
// plugin or an upstream (a description, an error message), and printed
// whole an escape sequence would act on the user's terminal.
func Clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return '?'
		}
		return r
	}, strings.Join(strings.Fields(s), " "))
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
