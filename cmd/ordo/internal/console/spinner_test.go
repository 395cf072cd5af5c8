package console

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/internal/syncbuf"
	"github.com/ordo-run/ordo/internal/testwait"
)

var frame = regexp.MustCompile(`\r\x1b\[K  [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] waiting for the planner  \d+\.\ds`)

// waitFrames waits until the ticker has drawn n frames.
func waitFrames(t *testing.T, s *syncbuf.Buffer, n int) {
	t.Helper()
	testwait.For(t, 10*time.Second, func() error {
		if len(frame.FindAllString(s.String(), -1)) < n {
			return fmt.Errorf("fewer than %d frames drawn:\n%q", n, s.String())
		}
		return nil
	})
}

// TestSpinnerOnTerminal: on a terminal the line is redrawn in place while
// the call lasts, output written meanwhile goes above it (the frame is
// erased first, drawn again after), and Stop erases it.
func TestSpinnerOnTerminal(t *testing.T) {
	var out syncbuf.Buffer
	d := NewDisplay(&out, true)
	d.Event(agent.Event{Kind: agent.EventLLMStarted, Message: "planner", Time: time.Now()})
	waitFrames(t, &out, 2) // the first frame at once, the next from the ticker
	d.Event(agent.Event{Kind: agent.EventStepSucceeded, ActionID: "a1", Tool: "t.a", Time: time.Now()})
	got := out.String()
	i := strings.Index(got, "✓ a1")
	if i < 0 || !strings.HasSuffix(got[:i], "\r\x1b[K  ") || !frame.MatchString(got[i:]) {
		t.Fatalf("a line written while spinning is not above the spinner:\n%q", got)
	}
	d.Event(agent.Event{Kind: agent.EventLLMEnded, Message: "planner", Time: time.Now()})
	got = out.String()
	if !regexp.MustCompile(`\r\x1b\[K  ◆ planner            model  \S+\n$`).MatchString(got) {
		t.Fatalf("the spinner's line is not replaced by the call's:\n%q", got)
	}
	after := len(got)
	time.Sleep(3 * spinEvery) // a stopped spinner draws nothing more
	if len(out.String()) != after {
		t.Fatalf("drawn after Stop:\n%q", out.String()[after:])
	}
}

// TestSpinnerElsewhere: on a pipe or a file only the lines are written.
func TestSpinnerElsewhere(t *testing.T) {
	var out syncbuf.Buffer
	s := NewSpinner(&out, false)
	s.Start("waiting for the planner")
	s.Write([]byte("line\n"))
	s.Stop()
	s.Stop() // twice is harmless
	if got := out.String(); got != "line\n" {
		t.Fatalf("wrote %q, want only the line", got)
	}
}
