// Package testhost is the tool side of Ordo as the MCP server's and the
// console's tests assemble it: a real host serving the test's tools in
// process, and a real recommender indexing its catalog. Only tests import
// it.
package testhost

import (
	"context"
	"testing"

	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/host/mcpsource"
	"github.com/ordo-run/ordo/plugins/sdk"
	"github.com/ordo-run/ordo/recommender"
)

// Start starts a host with opts, which opens upstream MCP servers as
// Ordo's does (mcpsource), and closes it when tb ends.
func Start(tb testing.TB, opts ...host.Option) *host.Host {
	tb.Helper()
	h, err := host.New(append([]host.Option{host.WithUpstreamOpener(mcpsource.Open)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = h.Close() })
	return h
}

// Serve adds tools to h in process, as the source "testtools" at version
// v1, and returns a recommender indexing h's whole catalog.
func Serve(tb testing.TB, h *host.Host, tools ...sdk.Tool) *recommender.Recommender {
	tb.Helper()
	ctx := context.Background()
	p, err := host.InProcess(tools...)
	if err != nil {
		tb.Fatal(err)
	}
	if err := h.AddProvider(ctx, "testtools", "v1", p); err != nil {
		tb.Fatal(err)
	}
	rec, err := recommender.New(recommender.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	for _, tool := range h.List() {
		if err := rec.Upsert(ctx, tool.Contract); err != nil {
			tb.Fatal(err)
		}
	}
	return rec
}
