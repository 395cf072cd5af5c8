package host

import (
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Option configures a Host.
type Option func(*options)

type options struct {
	logger         *slog.Logger
	dataDir        string
	pluginsDir     string
	plugins        []PluginSpec
	upstreams      []UpstreamSpec
	openUpstream   UpstreamOpener
	retry          RetryPolicy
	defaultTimeout time.Duration
	drainTimeout   time.Duration
	startTimeout   time.Duration
	healthInterval time.Duration
	restartMin     time.Duration
	restartMax     time.Duration
	debounce       time.Duration
	middleware     []Middleware
	startGate      <-chan struct{}
	reserved       []string
}

// Defaults of the options that `ordo` configuration (plugin_host.*) can
// change; the configuration's defaults are these.
const (
	DefaultCallTimeout    = 20 * time.Second
	DefaultDrainTimeout   = 30 * time.Second
	DefaultHealthInterval = 5 * time.Second
	DefaultRestartMin     = 100 * time.Millisecond
	DefaultRestartMax     = 30 * time.Second
)

func defaultOptions() options {
	return options{
		logger:         slog.Default(),
		dataDir:        defaultDataDir(),
		retry:          DefaultRetryPolicy,
		defaultTimeout: DefaultCallTimeout,
		drainTimeout:   DefaultDrainTimeout,
		startTimeout:   10 * time.Second,
		healthInterval: DefaultHealthInterval,
		restartMin:     DefaultRestartMin,
		restartMax:     DefaultRestartMax,
		debounce:       250 * time.Millisecond,
	}
}

// defaultDataDir is $XDG_DATA_HOME/ordo, else ~/.local/share/ordo.
func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "ordo")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "ordo")
	}
	return filepath.Join(os.TempDir(), "ordo")
}

func (o *options) check() error {
	bad := func(field string, v any) error {
		return contracts.Errorf(contracts.CodeInvalidConfig, "host option %s has a bad value %v", field, v).With("field", field)
	}
	switch {
	case o.logger == nil:
		return bad("logger", nil)
	case o.dataDir == "":
		return bad("data_dir", `""`)
	case o.retry.MaxAttempts < 1 || o.retry.BaseDelay < 0 || o.retry.MaxDelay < o.retry.BaseDelay:
		return bad("retry", o.retry)
	case o.defaultTimeout <= 0:
		return bad("default_timeout", o.defaultTimeout)
	case o.drainTimeout <= 0:
		return bad("drain_timeout", o.drainTimeout)
	case o.startTimeout <= 0:
		return bad("start_timeout", o.startTimeout)
	case o.healthInterval <= 0:
		return bad("health_interval", o.healthInterval)
	case o.restartMin <= 0 || o.restartMax < o.restartMin:
		return bad("restart_backoff", [2]time.Duration{o.restartMin, o.restartMax})
	case len(o.upstreams) > 0 && o.openUpstream == nil:
		return contracts.Errorf(contracts.CodeInvalidConfig, "host: upstreams declared without WithUpstreamOpener").With("field", "upstream_opener")
	}
	return nil
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithDataDir sets Ordo's data directory; each plugin gets
// <dir>/plugins/<name> as ORDO_PLUGIN_DATA_DIR.
func WithDataDir(dir string) Option { return func(o *options) { o.dataDir = dir } }

// WithPluginsDir loads plugins from dir and watches it for changes.
func WithPluginsDir(dir string) Option { return func(o *options) { o.pluginsDir = dir } }

// WithPlugins declares plugins (from configuration) to start in New.
func WithPlugins(specs ...PluginSpec) Option {
	return func(o *options) { o.plugins = append(o.plugins, specs...) }
}

// WithRetry sets the retry policy for retryable tool errors.
func WithRetry(p RetryPolicy) Option { return func(o *options) { o.retry = p } }

// WithDefaultTimeout bounds an attempt of a tool whose contract sets no
// timeout_ms (default 20 s).
func WithDefaultTimeout(d time.Duration) Option { return func(o *options) { o.defaultTimeout = d } }

// WithDrainTimeout bounds how long removal waits for in-flight calls
// (default 30 s).
func WithDrainTimeout(d time.Duration) Option { return func(o *options) { o.drainTimeout = d } }

// WithStartTimeout bounds a plugin's start and Describe (default 10 s).
func WithStartTimeout(d time.Duration) Option { return func(o *options) { o.startTimeout = d } }

// WithHealthInterval sets how often running plugins are health-checked
// (default 5 s). A crash is noticed within 100 ms regardless.
func WithHealthInterval(d time.Duration) Option { return func(o *options) { o.healthInterval = d } }

// WithRestartBackoff bounds the delay before restarting a crashed plugin;
// it doubles per failed restart from min to max.
func WithRestartBackoff(min, max time.Duration) Option {
	return func(o *options) { o.restartMin, o.restartMax = min, max }
}

// WithStartGate holds back the processes of the plugins New lists from the
// contract cache until gate is closed: their start (a process, its keys,
// its handshake) then does not compete for the CPU with whatever answers
// the cached list. A call to a tool of such a plugin starts it at once and
// waits for it, gate or not.
func WithStartGate(gate <-chan struct{}) Option { return func(o *options) { o.startGate = gate } }

// WithReservedNames keeps names for AddProvider: the host's owner adds its
// own tools under them after New (Ordo's built-in llm.* tools), so no
// plugin or upstream may take one first, as one in the plugins directory
// would at New. Such a plugin or upstream is refused (CodePluginRefused).
func WithReservedNames(names ...string) Option {
	return func(o *options) { o.reserved = append(o.reserved, names...) }
}

// WithMiddleware adds layers (audit, metrics) inside the built-in chain,
// nearest the tool.
func WithMiddleware(mw ...Middleware) Option {
	return func(o *options) { o.middleware = append(o.middleware, mw...) }
}
