package telemetry

import (
	"context"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// tracer is this package's tracer; through otel's global provider it is a
// no-op until StartTracing installs one.
var tracer = otel.Tracer("github.com/ordo-run/ordo/telemetry")

// TracingOn reports whether the OTEL_* variables ask for traces: an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
// or OTEL_TRACES_EXPORTER=otlp, unless OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none.
func TracingOn(env func(string) (string, bool)) bool {
	get := func(k string) string { v, _ := env(k); return strings.TrimSpace(v) }
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(get("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// StartTracing installs, when TracingOn, a global tracer provider that
// batches spans to OTLP over HTTP (otlptracehttp, configured by the
// standard OTEL_EXPORTER_OTLP_* variables; the sampler by
// OTEL_TRACES_SAMPLER; the service by OTEL_SERVICE_NAME, default "ordo")
// and the W3C trace-context propagator; the SDK's own reports go to log
// (routeOtelLogs). Otherwise it installs nothing: no exporter runs and
// every span is otel's no-op. The returned function flushes and stops the
// provider.
func StartTracing(ctx context.Context, env func(string) (string, bool), log *slog.Logger) (shutdown func(context.Context) error, err error) {
	if !TracingOn(env) {
		return func(context.Context) error { return nil }, nil
	}
	routeOtelLogs(log, env)
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	// Later detectors win: the environment overrides the default name.
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName("ordo")), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Shutdown, nil
}
