package config

import (
	"strings"
	"testing"
	"time"

	"github.com/ordo-run/ordo/host"
)

// plugin_host.* and postgres.* default to what the host and the store do
// without them; a bad value is a CodeInvalidConfig error naming its key.
func TestPluginHostAndPostgresKeys(t *testing.T) {
	home := envOf("HOME", "/home/ada")
	cfg, err := Parse(nil, "/etc/ordo", home)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.PluginHost; p.CallTimeout != host.DefaultCallTimeout || p.DrainTimeout != host.DefaultDrainTimeout ||
		p.HealthInterval != host.DefaultHealthInterval || p.RestartBackoff != (Backoff{host.DefaultRestartMin, host.DefaultRestartMax}) ||
		p.Retry != (Retry{host.DefaultRetryPolicy.MaxAttempts, Backoff{host.DefaultRetryPolicy.BaseDelay, host.DefaultRetryPolicy.MaxDelay}}) ||
		cfg.Postgres != (Postgres{AutoMigrate: true}) {
		t.Fatalf("defaults: %+v %+v", cfg.PluginHost, cfg.Postgres)
	}
	cfg, err = Parse([]byte("plugin_host:\n  call_timeout: 2m\n  restart_backoff: {min: 1s, max: 1s}\npostgres: {max_conns: 16}\n"), "/etc/ordo",
		envOf("HOME", "/home/ada", "ORDO_PLUGIN_HOST_DRAIN_TIMEOUT", "5s"))
	if err != nil || cfg.PluginHost.CallTimeout != 2*time.Minute || cfg.PluginHost.DrainTimeout != 5*time.Second ||
		cfg.PluginHost.RestartBackoff.Max != time.Second || cfg.Postgres.MaxConns != 16 {
		t.Fatalf("file and env: %+v %+v %v", cfg.PluginHost, cfg.Postgres, err)
	}
	for _, tc := range []struct{ file, key, says string }{
		{"plugin_host: {call_timeout: 0s}\n", "plugin_host.call_timeout", "a positive duration"},
		{"plugin_host: {drain_timeout: -1s}\n", "plugin_host.drain_timeout", "a positive duration"},
		{"plugin_host: {health_interval: 0s}\n", "plugin_host.health_interval", "a positive duration"},
		{"plugin_host: {restart_backoff: {min: 0s}}\n", "plugin_host.restart_backoff.min", "a positive duration"},
		{"plugin_host: {restart_backoff: {min: 1m, max: 1s}}\n", "plugin_host.restart_backoff.max", "at least restart_backoff.min"},
		{"plugin_host:\n  call_timeout: soon\n", "plugin_host.call_timeout", "a duration"},
		{"plugin_host: {retry: {attempts: 0}}\n", "plugin_host.retry.attempts", "from 1 to 10"},
		{"plugin_host: {retry: {attempts: 11}}\n", "plugin_host.retry.attempts", "from 1 to 10"},
		{"plugin_host: {retry: {backoff: {min: -1s}}}\n", "plugin_host.retry.backoff.min", "0 or more"},
		{"plugin_host: {retry: {backoff: {min: 1s, max: 10ms}}}\n", "plugin_host.retry.backoff.max", "at least retry.backoff.min"},
		{"postgres: {max_conns: -1}\n", "postgres.max_conns", "from 0 to 10000"},
		{"postgres:\n  pool: 3\n", "postgres.pool", "unknown key"},
	} {
		_, err := Parse([]byte(tc.file), "/etc/ordo", home)
		if k := keyOf(t, err); k != tc.key || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q: key %q, %v; want %s saying %q", tc.file, k, err, tc.key, tc.says)
		}
	}
}
