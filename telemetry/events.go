package telemetry

import (
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
)

// stepStart is when a step attempt was dispatched, and its tool.
type stepStart struct {
	at   time.Time
	tool string
}

// Event counts runs and steps from the engine's events (agent.Deps.Events).
// A step's duration runs from its step_started event to the event that
// records its result, both stamped by the engine.
func (m *Metrics) Event(ev agent.Event) {
	switch ev.Kind {
	case agent.EventRunStarted:
		m.runsStarted.Inc()
	case agent.EventCompleted, agent.EventFailed, agent.EventRejected:
		m.runsFinished.WithLabelValues(ev.Kind).Inc()
		m.forget(ev.RunID)
	case agent.EventInterrupted, agent.EventCancelled:
		// A run cancelled for good is final; one stopped at a step
		// boundary (status ready) resumes later and has not finished.
		if ev.Status == contracts.RunCancelled {
			m.runsFinished.WithLabelValues(string(contracts.RunCancelled)).Inc()
		}
		m.forget(ev.RunID) // the run stopped; no step of it is in flight
	case agent.EventStepStarted:
		m.mu.Lock()
		if m.starts[ev.RunID] == nil {
			m.starts[ev.RunID] = map[string]stepStart{}
		}
		m.starts[ev.RunID][ev.ActionID] = stepStart{at: ev.Time, tool: ev.Tool}
		m.mu.Unlock()
	case agent.EventStepSucceeded, agent.EventStepFailed, agent.EventStepSkipped:
		tool := m.tools.value(ev.Tool)
		m.steps.WithLabelValues(tool, stepStatus(ev.Kind)).Inc()
		m.mu.Lock()
		st, ok := m.starts[ev.RunID][ev.ActionID]
		delete(m.starts[ev.RunID], ev.ActionID)
		m.mu.Unlock()
		if ok && ev.Kind != agent.EventStepSkipped {
			m.stepSeconds.WithLabelValues(tool).Observe(ev.Time.Sub(st.at).Seconds())
		}
	}
}

// forget drops the start times kept for a run.
func (m *Metrics) forget(runID string) {
	m.mu.Lock()
	delete(m.starts, runID)
	m.mu.Unlock()
}

func stepStatus(kind string) string {
	switch kind {
	case agent.EventStepSucceeded:
		return "succeeded"
	case agent.EventStepFailed:
		return "failed"
	}
	return "skipped"
}
