package webui

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// BenchmarkRunPage renders the whole run page (layout, graph, steps,
// state, decisions) of a completed run of 1 and of 200 steps, each step
// with a 400-byte payload and result: the server's share of "a run page
// with 200 steps renders in under a second".
func BenchmarkRunPage(b *testing.B) {
	pages, err := parsePages()
	if err != nil {
		b.Fatal(err)
	}
	c := &Console{pages: pages}
	for _, n := range []int{1, 200} {
		run := completedRun(n)
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			for b.Loop() {
				c.render(discard{http.Header{}}, "run", nil, newRunView(run))
			}
		})
	}
}

// completedRun is a completed run of n echo steps, each after the last.
func completedRun(n int) *contracts.Run {
	text, _ := json.Marshal(map[string]string{"text": strings.Repeat("long text ", 40)})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run := &contracts.Run{ID: "run_bench", Goal: "bench", Status: contracts.RunCompleted, State: map[string]json.RawMessage{},
		Result: &contracts.RunResult{Answer: "done"}}
	p := contracts.Plan{Version: "1.0", Goal: "bench"}
	for i := 1; i <= n; i++ {
		id := "a" + strconv.Itoa(i)
		a := contracts.Action{ID: id, Tool: "test.echo", Intent: "transform", Produces: []string{"k" + id}}
		if i > 1 {
			a.DependsOn = []string{"a" + strconv.Itoa(i-1)}
		}
		p.Actions = append(p.Actions, a)
		run.Steps = append(run.Steps, contracts.StepRecord{ActionID: id, Tool: "test.echo", PlanVersion: 1, Status: contracts.StepSucceeded,
			Attempt: 1, Payload: text, Result: text, StartedAt: at, EndedAt: at.Add(time.Millisecond)})
		run.State["k"+id] = text
	}
	run.Plans = []contracts.PlanRevision{{Version: 1, Source: "caller", Plan: p}}
	return run
}

// discard is a ResponseWriter that drops the page.
type discard struct{ h http.Header }

func (d discard) Header() http.Header       { return d.h }
func (discard) Write(p []byte) (int, error) { return io.Discard.Write(p) }
func (discard) WriteHeader(int)             {}
