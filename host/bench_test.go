package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host/internal/testtools"
	pb "github.com/ordo-run/ordo/plugins/proto"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// BenchmarkPluginCall states the cost of the host on one plugin call: the
// same payload sent to a plugin process by a bare go-plugin gRPC client
// (to testdata/bareplugin, which answers the payload back) and through
// Host.Call (to testdata/testplugin's test.echo: the SDK's handler, the
// host's validation, retry and timeout layers). Both processes run with
// the host's transport settings (gRPC over a unix socket, AutoMTLS,
// checksum). "bare" and "host" time each side alone; "ratio" alternates
// one call of each per iteration, so both see the same machine, and
// reports host-p50/bare-p50 (issue 14: within 1.15).
//
//	go test -run '^$' -bench PluginCall -benchtime 20000x ./host/
func BenchmarkPluginCall(b *testing.B) {
	ctx := context.Background()
	bare := startBare(b)
	h, err := New(WithLogger(quietLogger()), WithDataDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if err := h.AddPlugin(ctx, PluginSpec{Name: "test", Path: testPluginBin}); err != nil {
		b.Fatal(err)
	}
	payload := json.RawMessage(`{"text":"hi"}`)
	bareCall := func() {
		resp, err := bare.Call(ctx, &pb.CallRequest{Tool: "test.echo", PayloadJson: payload, IdempotencyKey: "k"})
		if err != nil || len(resp.GetResultJson()) == 0 {
			b.Fatal(resp, err)
		}
	}
	hostCall := func() {
		if _, err := h.Call(ctx, "test.echo", payload, "k"); err != nil {
			b.Fatal(err)
		}
	}
	for range 200 { // warm both connections
		bareCall()
		hostCall()
	}
	for _, side := range []struct {
		name string
		call func()
	}{{"bare", bareCall}, {"host", hostCall}} {
		b.Run(side.name, func(b *testing.B) {
			var lat []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				side.call()
				lat = append(lat, time.Since(t0))
			}
			b.ReportMetric(p50(lat), "p50-µs")
		})
	}
	b.Run("ratio", func(b *testing.B) {
		var bl, hl []time.Duration
		i := 0
		for b.Loop() {
			first, second, fl, sl := bareCall, hostCall, &bl, &hl
			if i%2 == 1 {
				first, second, fl, sl = hostCall, bareCall, &hl, &bl
			}
			i++
			t0 := time.Now()
			first()
			t1 := time.Now()
			second()
			*fl = append(*fl, t1.Sub(t0))
			*sl = append(*sl, time.Since(t1))
		}
		bp, hp := p50(bl), p50(hl)
		b.ReportMetric(bp, "bare-p50-µs")
		b.ReportMetric(hp, "host-p50-µs")
		b.ReportMetric(hp/bp, "host/bare")
	})
}

// p50 is the median of lat in microseconds.
func p50(lat []time.Duration) float64 {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Microsecond)
}

// startBare starts testdata/bareplugin as the host starts a plugin
// (handshake, checksum, AutoMTLS, gRPC only) and returns its client.
func startBare(b *testing.B) pb.ToolPluginClient {
	sum, err := hex.DecodeString(sha(b, barePluginBin))
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(barePluginBin)
	isolate(cmd)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		Plugins:          plugin.PluginSet{sdk.PluginName: &sdk.GRPCPlugin{}},
		Cmd:              cmd,
		SkipHostEnv:      true,
		SecureConfig:     &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()},
		AutoMTLS:         true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           pluginLogger(quietLogger(), "bare", contracts.Concealer{}),
	})
	b.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		b.Fatal(err)
	}
	raw, err := rpc.Dispense(sdk.PluginName)
	if err != nil {
		b.Fatal(err)
	}
	return raw.(pb.ToolPluginClient)
}

// BenchmarkCallInProcess is test.echo through the host chain with the
// tools served in-process: the host's own cost without a process hop.
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
	ctx := context.Background()
	payload := json.RawMessage(`{"text":"hi"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Call(ctx, "test.echo", payload, "k"); err != nil {
			b.Fatal(err)
		}
	}
}
