package telemetry

import (
	"context"
	"log/slog"
	"net/url"
	"strings"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"

	"github.com/ordo-run/ordo/contracts"
)

// routeOtelLogs sends what the OpenTelemetry SDK reports — its internal
// log and the errors of exports — to log, with the exporter's secrets
// hidden: otel's defaults print to stderr with the standard logger, past
// Ordo's log level and format, and quote what a collector answered (a
// proxy that echoes the request's headers repeats the API key in
// OTEL_EXPORTER_OTLP_HEADERS) and an endpoint it cannot parse, password
// included.
func routeOtelLogs(log *slog.Logger, env func(string) (string, bool)) {
	h := hiding{next: log.With("component", "otel").Handler(), secrets: contracts.Conceal(otelSecrets(env)...)}
	otel.SetLogger(logr.FromSlogHandler(h))
	hidden := slog.New(h)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { hidden.Warn("tracing failed", "err", err) }))
}

// otelSecrets are the values of the OTLP exporter's headers and the
// passwords in its endpoints' URLs, as the variables hold them and
// unescaped.
func otelSecrets(env func(string) (string, bool)) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
			if u, err := url.QueryUnescape(s); err == nil && u != s {
				out = append(out, u)
			}
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		v, _ := env(k)
		for _, kv := range strings.Split(v, ",") {
			if _, val, ok := strings.Cut(kv, "="); ok {
				add(val)
			}
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		v, _ := env(k)
		// By hand, not url.Parse: an endpoint that does not parse is the one
		// otel logs whole.
		_, rest, _ := strings.Cut(v, "://")
		rest, _, _ = strings.Cut(rest, "/")
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
				add(pw)
			}
		}
	}
	return out
}

// hiding is a slog.Handler that replaces secrets in the message and the
// attributes of what it passes on.
type hiding struct {
	next    slog.Handler
	secrets contracts.Concealer
}

func (h hiding) hide(s string) string { return h.secrets.Text(s) }

func (h hiding) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		group := v.Group()
		out := make([]any, len(group))
		for i, g := range group {
			out[i] = h.attr(g)
		}
		return slog.Group(a.Key, out...)
	}
	if s := v.String(); h.hide(s) != s {
		return slog.String(a.Key, h.hide(s))
	}
	return a
}

func (h hiding) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h hiding) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.hide(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h hiding) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = h.attr(a)
	}
	return hiding{next: h.next.WithAttrs(out), secrets: h.secrets}
}

func (h hiding) WithGroup(name string) slog.Handler {
	return hiding{next: h.next.WithGroup(name), secrets: h.secrets}
}
