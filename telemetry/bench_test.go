package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/plugins/sdk"
	"github.com/ordo-run/ordo/telemetry"
)

// stepEngine is an engine on in-process no-op tools with every telemetry
// adapter on the step path: the host middleware, the observed store and
// the event consumer; and its metrics.
func stepEngine(b testing.TB, steps int) (*agent.Engine, *telemetry.Metrics) {
	m := telemetry.New()
	produces := map[string]string{} // each step yields a key of its own
	for i := range steps {
		produces[fmt.Sprintf("k%d", i)] = "$.v"
	}
	prov, err := host.InProcess(sdk.Tool{
		Contract: contracts.Contract{Tool: "bench.noop", Service: "bench", RiskLevel: contracts.RiskRead, Idempotent: true,
			Description:  "does nothing",
			InputSchema:  json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"object","required":["v"],"properties":{"v":{"type":"integer"}}}`),
			ProducesMap:  produces},
		Handler: func(context.Context, sdk.Call) (any, error) { return map[string]any{"v": 1}, nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	h, err := host.New(host.WithDataDir(b.TempDir()), host.WithLogger(slog.New(slog.DiscardHandler)), host.WithMiddleware(m.ToolCalls()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	if err := h.AddProvider(context.Background(), "bench", "1", prov); err != nil {
		b.Fatal(err)
	}
	store := memory.NewMemStore()
	m.Watch(store, h)
	return agent.New(agent.Config{}, agent.Deps{Tools: h, Store: m.Store(store, "memory"), Events: m.Event}), m
}

// chain is a plan of n no-op steps, each requiring the one before.
func chain(b testing.TB, n int) *contracts.Plan {
	var acts []string
	for i := range n {
		req := `[]`
		if i > 0 {
			req = fmt.Sprintf(`["k%d"]`, i-1)
		}
		acts = append(acts, fmt.Sprintf(`{"id":"a%d","tool":"bench.noop","intent":"read","requires":%s,"produces":["k%d"]}`, i, req, i))
	}
	p, err := contracts.ParsePlan([]byte(`{"version":"1.0","goal":"noop","timezone":"UTC","constraints":{"max_actions":64},"actions":[` +
		strings.Join(acts, ",") + `]}`))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkStepTracing is the engine's cost per step with tracing off
// (otel's global no-op: what runs when no OTEL_* variable is set) and on,
// every span sampled and handed to an exporter that drops it. Metrics are
// on in both. "off" must run first: otel's global tracers follow the
// first provider installed, for good (so run it with -count=1).
func BenchmarkStepTracing(b *testing.B) {
	const steps = 10
	run := func(b *testing.B) {
		e, _ := stepEngine(b, steps)
		plan := chain(b, steps)
		for b.Loop() {
			run, err := e.Run(context.Background(), agent.Request{Plan: plan})
			if err != nil || run.Status != contracts.RunCompleted {
				b.Fatalf("%v %+v", err, run.Error)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
	}
	b.Run("off", func(b *testing.B) {
		if _, sdkOn := otel.GetTracerProvider().(*sdktrace.TracerProvider); sdkOn {
			b.Skip("a tracer provider is installed already; run with -count=1")
		}
		run(b)
	})
	b.Run("noop-exporter", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
			sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		otel.SetTracerProvider(tp)
		b.Cleanup(func() { tp.Shutdown(context.Background()) })
		run(b)
	})
}
