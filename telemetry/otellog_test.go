package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/syncbuf"
)

// What the OpenTelemetry SDK reports goes to Ordo's log, with the
// exporter's secrets hidden: an export a collector (or a proxy) refuses
// with the request's headers echoed in its answer — the API key of
// OTEL_EXPORTER_OTLP_HEADERS among them — and an endpoint that does not
// parse, with a password in it. Not parallel: the variables and otel's
// globals are the process's.
func TestOtelReportsHideExporterSecrets(t *testing.T) {
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "refused: api key "+r.Header.Get("X-Api-Key")+", "+r.Header.Get("Authorization"), http.StatusBadRequest)
	}))
	t.Cleanup(echo.Close)
	for name, c := range map[string]struct{ endpoint, headers, want string }{
		"echoed headers": {echo.URL, "x-api-key=otel-key-s3cret,authorization=Bearer%20otel-token-s3cret", "refused: api key [REDACTED], [REDACTED]"},
		"bad endpoint":   {"http://ops:otel-pw-s3cret@127.0.0.1:bad", "", "ops:[REDACTED]@"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", c.headers)
			var logs syncbuf.Buffer
			stop, err := StartTracing(context.Background(), os.LookupEnv, slog.New(slog.NewJSONHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			_, span := otel.Tracer("test").Start(context.Background(), "step")
			span.End()
			stopErr := stop(context.Background())
			if got := logs.String() + "\n" + func() string {
				if stopErr != nil {
					return stopErr.Error()
				}
				return ""
			}(); strings.Contains(got, "s3cret") || !strings.Contains(got, c.want) {
				t.Fatalf("want %q and no secret in what otel reported:\n%s", c.want, got)
			}
		})
	}
}

// FuzzOtelSecrets: whatever OTEL_EXPORTER_OTLP_HEADERS holds, the value of
// every key=value entry in it (of 4 characters or more, as every
// contracts.Concealer) is hidden from a message or an attribute that
// quotes it.
func FuzzOtelSecrets(f *testing.F) {
	f.Add("x-api-key=k3y-s3cret,authorization=Bearer%20t0ken", "http://ops:pw-s3cret@collector:4318")
	f.Fuzz(func(t *testing.T, headers, endpoint string) {
		env := map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": headers, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
		h := hiding{secrets: contracts.Conceal(otelSecrets(func(k string) (string, bool) { v, ok := env[k]; return v, ok })...)}
		said := h.hide("export failed: "+headers) + "\n" + h.attr(slog.Group("g", slog.String("body", headers))).Value.Group()[0].Value.String()
		for _, kv := range strings.Split(headers, ",") {
			if _, v, ok := strings.Cut(kv, "="); ok {
				if v = strings.TrimSpace(v); len([]rune(v)) >= 4 && !strings.Contains(contracts.Redacted, v) && strings.Contains(said, v) {
					t.Fatalf("%q is in %q", v, said)
				}
			}
		}
	})
}
