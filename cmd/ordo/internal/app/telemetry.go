package app

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/telemetry"
)

// samplingModel is the model label of calls made through MCP sampling:
// the client's model, whose name Ordo does not choose.
const samplingModel = "mcp-sampling"

// startTelemetry makes the app's metrics, the engine's observed store, and
// starts tracing when the OTEL_* variables ask for it.
func (a *App) startTelemetry(ctx context.Context, env config.Env) error {
	a.Metrics = telemetry.New()
	name := config.StoreEmbedded
	if a.Config.IsPostgres() {
		name = "postgres"
	}
	a.engineStore = a.Metrics.Store(a.Store, name)
	stop, err := telemetry.StartTracing(ctx, env, a.Log)
	if err != nil {
		return contracts.Errorf(contracts.CodeInvalidConfig, "tracing from the OTEL_* variables: %w", err).With("key", "OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	a.stopTracing = stop
	return nil
}

// opsHandlers are what operators scrape and probe, served without a token
// beside /healthz: the Prometheus metrics and readiness.
func (a *App) opsHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/metrics": a.Metrics.Handler(),
		"/readyz":  telemetry.ReadyHandler(a.Store, a.Host),
	}
}

// ServeMetrics serves /metrics and /readyz on metrics.listen, when set,
// until stop — beside the MCP listener, or for `serve` over stdio, which
// has none. It returns once listening.
func (a *App) ServeMetrics() (stop func(), err error) {
	addr := a.Config.Metrics.Listen
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "listen on %s: %w", addr, err).With("key", "metrics.listen")
	}
	mux := http.NewServeMux()
	for path, h := range a.opsHandlers() {
		mux.Handle(path, h)
	}
	hs := a.HTTPServer(mux)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			a.Log.Error("metrics listener stopped", "addr", addr, "err", err)
		}
	}()
	a.Log.Info("serving metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		_ = hs.Close()
		<-done
	}, nil
}

// HTTPServer is an HTTP server for h with the configured bounds on slow
// and idle clients (http.read_timeout, http.idle_timeout): without them a
// client that sends a body a byte at a time, or keeps a connection open
// with no request, holds it for ever, signed in or not. A handler's
// answer is not bounded (event streams and long tool calls last), and
// neither is a stream once its request is read.
func (a *App) HTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: min(10*time.Second, a.Config.HTTP.ReadTimeout),
		ReadTimeout: a.Config.HTTP.ReadTimeout, IdleTimeout: a.Config.HTTP.IdleTimeout}
}
