package mcpsource_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/ordo-run/ordo/host"
)

// BenchmarkCall measures one host.Call through the whole invocation chain
// (validation, retry, timeout) to an upstream: server-everything's echo
// over stdio, and an mcp-go server's add over streamable HTTP on loopback.
func BenchmarkCall(b *testing.B) {
	b.Run("stdio-everything-echo", func(b *testing.B) {
		h := newHost(b)
		spec := host.UpstreamSpec{Name: "every", Command: []string{upstreamBin(b, "mcp-server-everything"), "stdio"}}
		if err := h.AddUpstream(context.Background(), spec); err != nil {
			b.Fatal(err)
		}
		benchCalls(b, h, "every.echo", `{"message":"hi"}`)
	})
	b.Run("http-mcpgo-add", func(b *testing.B) {
		addr := freeAddr(b)
		serve(b, addr, calcServer(true))
		h := newHost(b)
		if err := h.AddUpstream(context.Background(), host.UpstreamSpec{Name: "calc", URL: "http://" + addr + "/mcp", BearerToken: token}); err != nil {
			b.Fatal(err)
		}
		benchCalls(b, h, "calc.add", `{"a":1,"b":2}`)
	})
}

func benchCalls(b *testing.B, h *host.Host, tool, payload string) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Call(ctx, tool, json.RawMessage(payload), ""); err != nil {
			b.Fatal(err)
		}
	}
}
