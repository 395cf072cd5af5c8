package einobench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cloudwego/eino/compose"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
)

// sizes are the chain lengths measured; per-step cost should not depend
// on them.
var sizes = []int{10, 50, 200}

// noopTools is a catalog of one in-process tool that returns {"v":1}: no
// plugin, no host, so what is measured is the engine.
type noopTools struct{ t *contracts.Tool }

func (n noopTools) Lookup(name string) (*contracts.Tool, bool) { return n.t, name == n.t.Name() }
func (n noopTools) List() []*contracts.Tool                    { return []*contracts.Tool{n.t} }
func (n noopTools) Call(context.Context, string, json.RawMessage, string) (json.RawMessage, error) {
	return json.RawMessage(`{"v":1}`), nil
}

func chainPlan(b *testing.B, n int) *contracts.Plan {
	acts := make([]string, n)
	for i := range n {
		req := `[]`
		if i > 0 {
			req = fmt.Sprintf(`["k%d"]`, i-1)
		}
		acts[i] = fmt.Sprintf(`{"id":"a%d","tool":"noop.run","intent":"other","requires":%s,"produces":["k%d"]}`, i, req, i)
	}
	text := fmt.Sprintf(`{"version":"1.0","goal":"noop","timezone":"UTC","constraints":{"max_actions":%d},"actions":[%s]}`, n, strings.Join(acts, ","))
	p, err := contracts.ParsePlan([]byte(text))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func noopTool(b *testing.B, n int) *contracts.Tool {
	produces := map[string]string{}
	for i := range n {
		produces[fmt.Sprintf("k%d", i)] = "$.v"
	}
	t, err := contracts.NewTool(contracts.Contract{Tool: "noop.run", Service: "noop", Description: "does nothing", RiskLevel: contracts.RiskRead,
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["v"],"properties":{"v":{"type":"integer"}}}`), ProducesMap: produces})
	if err != nil {
		b.Fatal(err)
	}
	return t
}

func inc(_ context.Context, in map[string]any) (map[string]any, error) {
	in["v"] = in["v"].(int) + 1
	return in, nil
}

// BenchmarkPerStep: a chain of N no-op steps. ordo: a caller's plan run
// by the engine, every step checkpointed (one log entry) in the in-memory
// store, with leases. eino-chain and eino-dag: compose.NewChain and a
// compose.NewGraph in DAG mode (AllPredecessor) of N lambda nodes, compiled
// once, invoked per iteration. Each reports ns/step; compare within one
// run (make bench-eino).
func BenchmarkPerStep(b *testing.B) {
	ctx := context.Background()
	for _, n := range sizes {
		b.Run(fmt.Sprintf("ordo/N=%d", n), func(b *testing.B) {
			plan := chainPlan(b, n)
			e := agent.New(agent.Config{}, agent.Deps{Tools: noopTools{noopTool(b, n)}, Store: memory.NewMemStore()})
			for b.Loop() {
				run, err := e.Run(ctx, agent.Request{Plan: plan})
				if err != nil || run.Status != contracts.RunCompleted {
					b.Fatalf("%v %+v", err, run.Error)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
		})
		b.Run(fmt.Sprintf("eino-chain/N=%d", n), func(b *testing.B) {
			c := compose.NewChain[map[string]any, map[string]any]()
			for range n {
				c.AppendLambda(compose.InvokableLambda(inc))
			}
			r, err := c.Compile(ctx)
			if err != nil {
				b.Fatal(err)
			}
			invoke(b, r, n)
		})
		b.Run(fmt.Sprintf("eino-dag/N=%d", n), func(b *testing.B) {
			g := compose.NewGraph[map[string]any, map[string]any]()
			prev := compose.START
			for i := range n {
				key := fmt.Sprintf("n%d", i)
				if err := g.AddLambdaNode(key, compose.InvokableLambda(inc)); err != nil {
					b.Fatal(err)
				}
				if err := g.AddEdge(prev, key); err != nil {
					b.Fatal(err)
				}
				prev = key
			}
			if err := g.AddEdge(prev, compose.END); err != nil {
				b.Fatal(err)
			}
			r, err := g.Compile(ctx, compose.WithNodeTriggerMode(compose.AllPredecessor))
			if err != nil {
				b.Fatal(err)
			}
			invoke(b, r, n)
		})
	}
}

func invoke(b *testing.B, r compose.Runnable[map[string]any, map[string]any], n int) {
	ctx := context.Background()
	for b.Loop() {
		out, err := r.Invoke(ctx, map[string]any{"v": 0})
		if err != nil || out["v"] != n {
			b.Fatalf("%v %v", out, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
}
