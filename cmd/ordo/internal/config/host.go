package config

import (
	"time"

	"github.com/ordo-run/ordo/host"
)

// PluginHost tunes how Ordo runs its tool sources: plugins, upstream MCP
// servers and in-process tools (host.With* options).
type PluginHost struct {
	// CallTimeout bounds one attempt of a tool whose contract sets no
	// timeout_ms.
	CallTimeout time.Duration `yaml:"call_timeout"`
	// DrainTimeout bounds how long removing or replacing a plugin waits
	// for the calls in flight before ending them.
	DrainTimeout time.Duration `yaml:"drain_timeout"`
	// HealthInterval is how often running plugins are health-checked; a
	// crash is noticed at once regardless.
	HealthInterval time.Duration `yaml:"health_interval"`
	// RestartBackoff is the delay before restarting a crashed plugin or
	// reconnecting a lost upstream: Min, doubling per failure up to Max.
	RestartBackoff Backoff `yaml:"restart_backoff"`
	// Retry is how a call that failed with a retryable error (the tool
	// was unreachable, a plugin crashed under an idempotent call, the tool
	// said so) is tried again when its action sets no retries: Attempts
	// in all, Backoff.Min then doubling up to Max between them.
	Retry Retry `yaml:"retry"`
}

// Retry bounds the host's retries of retryable tool errors.
type Retry struct {
	Attempts int     `yaml:"attempts"` // including the first
	Backoff  Backoff `yaml:"backoff"`
}

// Backoff is a delay that doubles from Min to Max.
type Backoff struct {
	Min time.Duration `yaml:"min"`
	Max time.Duration `yaml:"max"`
}

// Postgres tunes the store when store is a Postgres URL.
type Postgres struct {
	// MaxConns bounds the connection pool; 0 leaves it to the URL's
	// pool_max_conns, else pgxpool's default (the larger of 4 and the
	// number of CPUs).
	MaxConns int `yaml:"max_conns"`
	// AutoMigrate applies pending migrations at start; off, a server
	// refuses a database `ordo migrate` has not brought up to date (for
	// deployments whose servers may not change the schema).
	AutoMigrate bool `yaml:"auto_migrate"`
}

func defaultPluginHost() PluginHost {
	return PluginHost{CallTimeout: host.DefaultCallTimeout, DrainTimeout: host.DefaultDrainTimeout,
		HealthInterval: host.DefaultHealthInterval,
		RestartBackoff: Backoff{Min: host.DefaultRestartMin, Max: host.DefaultRestartMax},
		Retry: Retry{Attempts: host.DefaultRetryPolicy.MaxAttempts,
			Backoff: Backoff{Min: host.DefaultRetryPolicy.BaseDelay, Max: host.DefaultRetryPolicy.MaxDelay}}}
}

// HostOptions are the host options plugin_host.* sets.
func (p PluginHost) HostOptions() []host.Option {
	return []host.Option{host.WithDefaultTimeout(p.CallTimeout), host.WithDrainTimeout(p.DrainTimeout),
		host.WithHealthInterval(p.HealthInterval), host.WithRestartBackoff(p.RestartBackoff.Min, p.RestartBackoff.Max),
		host.WithRetry(host.RetryPolicy{MaxAttempts: p.Retry.Attempts, BaseDelay: p.Retry.Backoff.Min, MaxDelay: p.Retry.Backoff.Max})}
}

func (c *Config) validatePluginHost() error {
	p := c.PluginHost
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"plugin_host.call_timeout", p.CallTimeout}, {"plugin_host.drain_timeout", p.DrainTimeout},
		{"plugin_host.health_interval", p.HealthInterval}, {"plugin_host.restart_backoff.min", p.RestartBackoff.Min}} {
		if d.v <= 0 {
			return invalid(d.key, "a positive duration such as 30s, got %s", d.v)
		}
	}
	if p.RestartBackoff.Max < p.RestartBackoff.Min {
		return invalid("plugin_host.restart_backoff.max", "a duration at least restart_backoff.min (%s), got %s", p.RestartBackoff.Min, p.RestartBackoff.Max)
	}
	if err := intRange("plugin_host.retry.attempts", p.Retry.Attempts, 1, 10); err != nil {
		return err
	}
	if p.Retry.Backoff.Min < 0 {
		return invalid("plugin_host.retry.backoff.min", "a duration of 0 or more, got %s", p.Retry.Backoff.Min)
	}
	if p.Retry.Backoff.Max < p.Retry.Backoff.Min {
		return invalid("plugin_host.retry.backoff.max", "a duration at least retry.backoff.min (%s), got %s", p.Retry.Backoff.Min, p.Retry.Backoff.Max)
	}
	return intRange("postgres.max_conns", c.Postgres.MaxConns, 0, 10000)
}
