package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/memory"
)

// Sources is the host's report on its tool sources; *host.Host has it.
type Sources interface {
	Sources() []host.SourceInfo
	Upstreams() []host.UpstreamInfo
}

// unfinished are the statuses a run leaves; finished runs are counted as
// they finish (ordo_runs_finished_total), not by reading the store.
var unfinished = []contracts.RunStatus{contracts.RunPending, contracts.RunReady, contracts.RunRunning, contracts.RunInterrupted}

// Watch adds metrics read from current state at each scrape: unfinished
// runs by status, interrupts waiting for a person and the oldest one's
// age (from the store, which every server sharing it sees alike), plugin
// restarts and whether each plugin and upstream is up (from src).
func (m *Metrics) Watch(store memory.Checkpointer, src Sources) {
	m.reg.MustRegister(&stateCollector{store: store, src: src, now: time.Now})
}

var (
	runsDesc = prometheus.NewDesc("ordo_runs", "Unfinished runs in the store, by status.", []string{"status"}, nil)
	waitDesc = prometheus.NewDesc("ordo_interrupts_waiting", "Runs interrupted and waiting for a person's decision.", nil, nil)
	ageDesc  = prometheus.NewDesc("ordo_interrupt_oldest_age_seconds",
		"How long the oldest interrupted run has waited since its last checkpoint (0 when none waits).", nil, nil)
	storeUpDesc   = prometheus.NewDesc("ordo_store_up", "Whether the run store answered the last scrape's query.", nil, nil)
	restartsDesc  = prometheus.NewDesc("ordo_plugin_restarts_total", "Restarts of a plugin process since it was added.", []string{"plugin"}, nil)
	pluginUpDesc  = prometheus.NewDesc("ordo_plugin_up", "Whether a plugin process is running (1) or not (0).", []string{"plugin"}, nil)
	upstreamDesc  = prometheus.NewDesc("ordo_upstream_up", "Whether an upstream MCP server is connected (1) or not (0).", []string{"upstream"}, nil)
	scrapeTimeout = 5 * time.Second
)

type stateCollector struct {
	store memory.Checkpointer
	src   Sources
	now   func() time.Time

	// /metrics answers without a token and each read lists every
	// unfinished run, so scrapes read the store one at a time, and one
	// that waited takes the read that began after it came rather than
	// making another (see unfinishedRuns).
	mu    sync.Mutex
	reads atomic.Int64 // reads begun
	sums  []memory.RunSummary
	err   error
}

// unfinishedRuns lists the unfinished runs as of a read begun after the
// call.
func (c *stateCollector) unfinishedRuns() ([]memory.RunSummary, error) {
	begun := c.reads.Load()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reads.Load() > begun { // a read began after this call and has ended
		return c.sums, c.err
	}
	c.reads.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	c.sums, c.err = c.store.List(ctx, memory.Filter{Status: unfinished})
	return c.sums, c.err
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{runsDesc, waitDesc, ageDesc, storeUpDesc, restartsDesc, pluginUpDesc, upstreamDesc} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	sums, err := c.unfinishedRuns()
	gauge(storeUpDesc, bool01(err == nil))
	if err == nil {
		by := map[contracts.RunStatus]int{}
		var oldest time.Time
		for _, s := range sums {
			by[s.Status]++
			if s.Status == contracts.RunInterrupted && (oldest.IsZero() || s.UpdatedAt.Before(oldest)) {
				oldest = s.UpdatedAt
			}
		}
		for _, st := range unfinished {
			gauge(runsDesc, float64(by[st]), string(st))
		}
		gauge(waitDesc, float64(by[contracts.RunInterrupted]))
		age := 0.0
		if !oldest.IsZero() {
			age = c.now().Sub(oldest).Seconds()
		}
		gauge(ageDesc, age)
	}
	for _, p := range c.src.Sources() {
		if p.Kind != "plugin" {
			continue
		}
		ch <- prometheus.MustNewConstMetric(restartsDesc, prometheus.CounterValue, float64(p.Restarts), p.Name)
		gauge(pluginUpDesc, bool01(p.State == host.StateRunning), p.Name)
	}
	for _, u := range c.src.Upstreams() {
		gauge(upstreamDesc, bool01(u.Connected), u.Name)
	}
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
