package telemetry

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is Ordo's Prometheus registry and every metric in it. Labels
// carry only bounded values (statuses, outcomes, codes, catalog and
// configuration names), never a run id or user input.
type Metrics struct {
	reg *prometheus.Registry

	runsStarted  prometheus.Counter
	runsFinished *prometheus.CounterVec   // outcome
	steps        *prometheus.CounterVec   // tool, status
	stepSeconds  *prometheus.HistogramVec // tool
	toolErrors   *prometheus.CounterVec   // tool, code
	takeovers    prometheus.Counter
	checkpoint   *prometheus.HistogramVec // store
	llmCalls     *prometheus.CounterVec   // role, model, outcome
	llmTokens    *prometheus.CounterVec   // role, model, type
	llmSeconds   *prometheus.HistogramVec // role, model
	mcpRequests  *prometheus.CounterVec   // method, outcome
	mcpSeconds   *prometheus.HistogramVec // method

	// tools and roles bound the tool and role labels: a catalog of
	// thousands of tools must not become thousands of series each.
	tools, roles *bounded

	// starts are the step_started times of steps in flight, by run then
	// action, so that a step's end event gives its duration.
	mu     sync.Mutex
	starts map[string]map[string]stepStart
}

// maxTools and maxRoles bound the distinct values of the tool and role
// labels; later values are counted as "other".
const (
	maxTools = 200
	maxRoles = 32
)

// New registers every metric, with the Go runtime and process collectors,
// in a registry of its own.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{reg: reg, tools: newBounded(maxTools), roles: newBounded(maxRoles), starts: map[string]map[string]stepStart{}}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		reg.MustRegister(v)
		return v
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		reg.MustRegister(v)
		return v
	}
	m.runsStarted = prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_runs_started_total", Help: "Runs created (planned or given a plan)."})
	m.takeovers = prometheus.NewCounter(prometheus.CounterOpts{Name: "ordo_lease_takeovers_total",
		Help: "Runs this server claimed after their driver's lease expired (a server died mid-run)."})
	reg.MustRegister(m.runsStarted, m.takeovers)
	m.runsFinished = counter("ordo_runs_finished_total", "Runs that reached a final status, by outcome (completed, failed, rejected, cancelled).", "outcome")
	m.steps = counter("ordo_steps_total", "Step attempts, by tool and status (succeeded, failed, skipped).", "tool", "status")
	m.stepSeconds = histogram("ordo_step_duration_seconds", "Duration of a step attempt from dispatch to its recorded result, by tool.",
		prometheus.ExponentialBuckets(0.001, 4, 10), "tool")
	m.toolErrors = counter("ordo_tool_errors_total", "Tool call attempts that failed, by tool and Ordo error code.", "tool", "code")
	m.checkpoint = histogram("ordo_checkpoint_write_duration_seconds", "Latency of one checkpoint write (a run log append), by store.",
		prometheus.ExponentialBuckets(0.0001, 4, 10), "store")
	m.llmCalls = counter("ordo_llm_calls_total", "LLM calls, by role (planner, composer, ...), model and outcome (ok, error).", "role", "model", "outcome")
	m.llmTokens = counter("ordo_llm_tokens_total", "LLM tokens, by role, model and type (input, output).", "role", "model", "type")
	m.llmSeconds = histogram("ordo_llm_call_duration_seconds", "LLM call latency, by role and model.",
		prometheus.ExponentialBuckets(0.05, 2.5, 10), "role", "model")
	m.mcpRequests = counter("ordo_mcp_requests_total", "MCP requests served, by method and outcome (ok, error).", "method", "outcome")
	m.mcpSeconds = histogram("ordo_mcp_request_duration_seconds", "MCP request latency, by method.",
		prometheus.ExponentialBuckets(0.0005, 4, 12), "method")
	return m
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is the registry itself, for tests and extra collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// outcome is the outcome label of a call that returned err.
func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// bounded keeps a label to at most max distinct values; later ones are
// "other".
type bounded struct {
	mu   sync.Mutex
	seen map[string]struct{}
	max  int
}

func newBounded(max int) *bounded { return &bounded{seen: map[string]struct{}{}, max: max} }

func (b *bounded) value(v string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return v
	}
	if len(b.seen) >= b.max {
		return "other"
	}
	b.seen[v] = struct{}{}
	return v
}
