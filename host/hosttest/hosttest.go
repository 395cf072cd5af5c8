package hosttest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/testbuild"
)

// The variables plugins/internal/killpoint reads to arm a kill point (its
// PointEnv and HitEnv; a package outside plugins cannot import it). A
// drifted name leaves the plugin alive, which Crash reports.
const (
	killpointEnv    = "ORDO_KILLPOINT"
	killpointHitEnv = "ORDO_KILLPOINT_HIT"
)

// Build compiles cmd/ordo-plugin-<name> into a temporary directory. With
// -short it skips the test instead: building and starting a plugin binary
// is what -short leaves out.
func Build(t testing.TB, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and starts a plugin binary")
	}
	bin := filepath.Join(t.TempDir(), "ordo-plugin-"+name)
	if err := testbuild.Build(bin, "./cmd/ordo-plugin-"+name); err != nil {
		t.Fatalf("build ordo-plugin-%s: %v", name, err)
	}
	return bin
}

// Plugin is one plugin running under its own host.
type Plugin struct {
	t    testing.TB
	Host *host.Host
	// DataDir is the plugin's ORDO_PLUGIN_DATA_DIR.
	DataDir string

	bin, name, ordoDir string // how it was started, for Restart
	env                map[string]string
}

// Start runs bin as plugin name under a new host whose data directory is
// ordoDir, passing env. Starting again with the same ordoDir is a plugin
// restart: the data directory, and what the plugin persisted, is the same.
func Start(t testing.TB, bin, name, ordoDir string, env map[string]string) *Plugin {
	t.Helper()
	return start(t, bin, name, ordoDir, env)
}

func start(t testing.TB, bin, name, ordoDir string, env map[string]string, opts ...host.Option) *Plugin {
	t.Helper()
	opts = append([]host.Option{host.WithDataDir(ordoDir), host.WithStartTimeout(30 * time.Second),
		host.WithPlugins(host.PluginSpec{Name: name, Path: bin, Env: env})}, opts...)
	h, err := host.New(opts...)
	if err != nil {
		t.Fatalf("start plugin %s: %v", name, err)
	}
	t.Cleanup(func() { h.Close() })
	return &Plugin{t: t, Host: h, DataDir: filepath.Join(ordoDir, "plugins", name), bin: bin, name: name, ordoDir: ordoDir, env: env}
}

// Restart stops p's host and starts the plugin again as Start did: what
// it persisted in its data directory is there for the new process.
func (p *Plugin) Restart() *Plugin {
	p.t.Helper()
	p.Host.Close()
	return Start(p.t, p.bin, p.name, p.ordoDir, p.env)
}

// Call calls tool through the host and returns the decoded result.
func (p *Plugin) Call(tool string, payload any, key string) map[string]any {
	p.t.Helper()
	out, err := p.call(tool, payload, key)
	if err != nil {
		p.t.Fatalf("%s through the host: %v", tool, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		p.t.Fatalf("%s: result %s: %v", tool, out, err)
	}
	return m
}

// Refused calls tool expecting the plugin's refusal: a non-retryable tool
// error whose details, carried over gRPC, name field.
func (p *Plugin) Refused(tool string, payload any, key, field string) {
	p.t.Helper()
	out, err := p.call(tool, payload, key)
	e := contracts.AsError(err)
	if err == nil || e.Code != contracts.CodeToolFailed || e.Retryable || e.Details["field"] != field {
		p.t.Fatalf("%s(%v) = %s, %v (details %v); want a non-retryable tool error naming %q", tool, payload, out, err, e.Details, field)
	}
}

func (p *Plugin) call(tool string, payload any, key string) (json.RawMessage, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		p.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.Host.Call(ctx, tool, data, key)
}

// Crash starts bin armed to die at the hit-th arrival at kill point point
// (see plugins/internal/killpoint), calls tool, checks that the call was
// cut off by the plugin's death (CodeToolCrashed) and stops the host. What
// the plugin persisted before the kill stays in ordoDir for a restart.
// The host makes one attempt: a crashed keyed call would otherwise be
// re-issued to the restarted plugin, which the caller means to do itself.
func Crash(t testing.TB, bin, name, ordoDir string, env map[string]string, point string, hit int, tool string, payload any, key string) {
	t.Helper()
	armed := map[string]string{killpointEnv: point, killpointHitEnv: fmt.Sprint(hit)}
	maps.Copy(armed, env)
	p := start(t, bin, name, ordoDir, armed, host.WithRetry(host.RetryPolicy{MaxAttempts: 1}))
	defer p.Host.Close()
	out, err := p.call(tool, payload, key)
	if code := contracts.CodeOf(err); code != contracts.CodeToolCrashed {
		t.Fatalf("%s armed to die at %s#%d: got %s, %v (code %d); want the plugin killed mid-call", tool, point, hit, out, err, code)
	}
}
