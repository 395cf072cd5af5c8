package telemetry

import "testing"

// TestTracingOn: tracing follows the standard OTEL_* variables and is off
// when none asks for it.
func TestTracingOn(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "ordo"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		got := TracingOn(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
		if got != c.want {
			t.Errorf("%v: %v, want %v", c.env, got, c.want)
		}
	}
}

// TestBoundedLabels: past its bound a label's new values are "other";
// values already seen keep their own series.
func TestBoundedLabels(t *testing.T) {
	b := newBounded(2)
	for in, want := range map[string]string{"a": "a", "b": "b"} {
		if got := b.value(in); got != want {
			t.Errorf("%s -> %s", in, got)
		}
	}
	if b.value("c") != "other" || b.value("a") != "a" {
		t.Error("the bound does not hold")
	}
}
