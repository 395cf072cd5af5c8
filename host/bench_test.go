package host

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ordo-run/ordo/host/internal/testtools"
)

// BenchmarkCallPlugin is one echo call through the host to a plugin
// process (gRPC over a unix socket with mutual TLS).
func BenchmarkCallPlugin(b *testing.B) {
	h, err := New(WithLogger(quietLogger()), WithDataDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if err := h.AddPlugin(context.Background(), PluginSpec{Name: "test", Path: testPluginBin}); err != nil {
		b.Fatal(err)
	}
	benchEcho(b, h)
}

// BenchmarkCallInProcess is the same handler and the same host chain,
// with the tools served in-process.
func BenchmarkCallInProcess(b *testing.B) {
	h, err := New(WithLogger(quietLogger()), WithDataDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	p, err := InProcess(testtools.Tools()...)
	if err != nil {
		b.Fatal(err)
	}
	if err := h.AddProvider(context.Background(), "builtin", "", p); err != nil {
		b.Fatal(err)
	}
	benchEcho(b, h)
}

func benchEcho(b *testing.B, h *Host) {
	ctx := context.Background()
	payload := json.RawMessage(`{"text":"hi"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Call(ctx, "test.echo", payload, "k"); err != nil {
			b.Fatal(err)
		}
	}
}
