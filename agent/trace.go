package agent

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/ordo-run/ordo/contracts"
)

// tracer starts the engine's spans — a run, its planning, each step —
// through otel's global provider: no-ops until a process installs one
// (telemetry.StartTracing), so an untraced engine pays next to nothing.
// The host's and the model's spans for the same work are their children.
var tracer = otel.Tracer("github.com/ordo-run/ordo/agent")

// driveSpans name the span of each way a stored run is moved on.
var driveSpans = [...]string{byExecute: "ordo.execute", byResume: "ordo.resume", byRecover: "ordo.recover"}

// attrRun names the run a span works on.
func attrRun(id string) attribute.KeyValue { return attribute.String("ordo.run.id", id) }

// endSpan ends span, failed when err is not nil or the run it reports on
// failed (a run that fails closed returns no error).
func endSpan(span trace.Span, run *contracts.Run, err error) {
	if run != nil {
		span.SetAttributes(attrRun(run.ID), attribute.String("ordo.run.status", string(run.Status)))
		if err == nil && run.Error != nil && run.Status == contracts.RunFailed {
			err = run.Error
		}
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// startSpan starts an engine span named name under ctx's span.
func startSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}
