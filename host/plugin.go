package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/plugins/sdk"
)

// PluginSpec declares a plugin binary.
type PluginSpec struct {
	Name string `json:"name" yaml:"name"`
	Path string `json:"path" yaml:"path"`
	// SHA256 is the hex digest the binary must have. Empty pins the digest
	// found at first start, with a warning.
	SHA256 string `json:"sha256,omitempty" yaml:"sha256,omitempty"`
	// PinFound, with SHA256 empty, pins the binary found at start without
	// a warning: for plugins shipped beside Ordo, trusted as found.
	PinFound bool              `json:"-" yaml:"-"`
	Env      map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
	Args     []string          `json:"args,omitempty" yaml:"args,omitempty"`
	// Contracts, with PinFound, are what the binary is known to describe
	// with Env and Args before it has run (Ordo's bundled plugins are
	// built from Ordo's own module): such a plugin is listed at once, from
	// the contract cache or else from these, and is pinned and started in
	// the background, as a plugin listed from the cache is. What its
	// process describes wins.
	Contracts []contracts.Contract `json:"-" yaml:"-"`
}

// AddPlugin verifies, starts and admits a plugin: checksum, handshake,
// Describe, every contract checked. It fails with a coded error
// (CodeChecksumMismatch, CodeProtocolMismatch, CodeInvalidContract,
// CodePluginRefused, CodeInvalidInput) and then leaves nothing running.
func (h *Host) AddPlugin(ctx context.Context, spec PluginSpec) error {
	return h.addPlugin(ctx, spec, originAPI)
}

func (h *Host) addPlugin(ctx context.Context, spec PluginSpec, origin string) error {
	h.warnShortSecrets("plugin", spec.Name, spec.Env, nil)
	src := newSource(spec.Name, kindPlugin, origin)
	src.hide = answerSecrets(spec.Env)
	err := h.admitPlugin(ctx, src, spec)
	if err != nil && origin != originAPI {
		h.mu.Lock()
		h.refused[spec.Name] = SourceInfo{Name: spec.Name, Kind: kindPlugin, Origin: origin, Path: spec.Path,
			SHA256: spec.SHA256, State: StateRefused, Error: err.Error()}
		h.mu.Unlock()
	}
	return err
}

// admitPlugin checks spec, starts the first instance, registers the source
// and starts its supervisor. A plugin whose contracts are cached for its
// binary (see contractCache), or known before it runs (PluginSpec.Contracts),
// is registered with them at once, in state starting, and its process is
// started in the background (bringUp).
func (h *Host) admitPlugin(ctx context.Context, src *source, spec PluginSpec) error {
	if err := checkName(spec.Name); err != nil {
		return err
	}
	if err := h.nameFree(spec.Name); err != nil {
		return err
	}
	tools, ahead, err := h.known(&spec)
	if err != nil {
		return err
	}
	if !ahead {
		if spec, err = h.pin(spec); err != nil {
			return err
		}
		tools, ahead = h.cachedTools(spec)
	}
	src.spec, src.path = spec, spec.Path
	if ahead {
		if err := h.admitTools(src, tools); err != nil {
			return err
		}
		h.bringing.Add(1)
		go h.bringUp(src)
		return nil
	}
	in, err := h.start(ctx, spec)
	if err != nil {
		return err
	}
	if err := h.admit(ctx, src, in); err != nil {
		return err
	}
	src.setRunning(in)
	h.remember(spec, in)
	h.supervised(src)
	h.log.Info("plugin started", "plugin", spec.Name, "version", in.version, "pid", in.pid(), "tools", len(h.cat.names(src)))
	return nil
}

// supervised starts src's supervisor, unless src was retired meanwhile.
func (h *Host) supervised(src *source) {
	sctx, stop := context.WithCancel(context.Background())
	src.mu.Lock()
	if src.retired {
		src.mu.Unlock()
		stop()
		return
	}
	src.stopSup, src.supDone = stop, make(chan struct{})
	src.mu.Unlock()
	go h.supervise(sctx, src)
}

// known returns the tools of a plugin trusted as found whose contracts
// are known before it runs (PluginSpec.Contracts): the cache's for its
// binary, else the known ones. Its pin cannot fail on a checksum, so it is
// left to bringUp: hashing the binary is not on the way to the first
// list. It only makes spec.Path absolute.
func (h *Host) known(spec *PluginSpec) ([]*contracts.Tool, bool, error) {
	if !spec.PinFound || spec.SHA256 != "" || spec.Contracts == nil {
		return nil, false, nil
	}
	path, err := absPath(*spec)
	if err != nil {
		return nil, false, err
	}
	spec.Path = path
	if tools, ok := h.cachedTools(*spec); ok {
		return tools, true, nil
	}
	tools, err := checkContracts(spec.Contracts, nil)
	return tools, err == nil, nil
}

// cachedTools returns the checked tools the cache holds for spec's binary.
func (h *Host) cachedTools(spec PluginSpec) ([]*contracts.Tool, bool) {
	e, ok := h.cache.valid(spec)
	if !ok {
		return nil, false
	}
	cs, err := e.contracts()
	if err != nil {
		return nil, false
	}
	tools, err := checkContracts(cs, nil)
	if err != nil {
		return nil, false
	}
	return tools, true
}

// admitTools registers src with tools and no instance yet: state starting.
func (h *Host) admitTools(src *source, tools []*contracts.Tool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errClosed(src.name)
	}
	if old, dup := h.sources[src.name]; dup && old != src {
		return errDuplicate(src.name)
	}
	if err := h.cat.set(src, tools); err != nil {
		return err
	}
	src.mu.Lock()
	src.state = StateStarting
	src.mu.Unlock()
	h.sources[src.name] = src
	delete(h.refused, src.name) // see admit
	return nil
}

// bringUp pins (if New has not) and starts the process of a plugin listed
// from the cache or from known contracts. What it describes replaces the
// listed tools (catalog events for any difference). If it cannot start,
// the plugin is refused as if New had started it: its tools leave the
// catalog, the calls waiting for it fail as unavailable, and its cache
// entry is dropped.
func (h *Host) bringUp(src *source) {
	defer h.bringing.Done()
	ctx := h.bringCtx
	spec := src.spec
	if gate := h.opts.startGate; gate != nil {
		select {
		case <-gate:
		case <-src.wanted:
		case <-ctx.Done():
			return
		}
	}
	// Starting a plugin is CPU work (keys, a process, a handshake); leave
	// a core to whatever is answering while the cached list is served,
	// unless a call is waiting for this one.
	select {
	case h.bringSlots <- struct{}{}:
		defer func() { <-h.bringSlots }()
	case <-src.wanted:
	case <-ctx.Done():
		return
	}
	var err error
	if spec.SHA256 == "" { // listed from PluginSpec.Contracts, not pinned yet
		if spec, err = h.pin(spec); err == nil {
			src.pinned(spec)
		}
	}
	var in *instance
	if err == nil {
		in, err = h.start(ctx, spec)
	}
	var tools []*contracts.Tool
	if err == nil {
		if tools, err = h.describe(ctx, src, in.prov); err != nil {
			in.stop()
		}
	}
	h.mu.Lock()
	current := !h.closed && h.sources[src.name] == src
	if err == nil && current {
		if err = h.cat.set(src, tools); err != nil {
			in.stop()
		}
	}
	if err != nil && current {
		delete(h.sources, src.name)
		if src.origin != originAPI {
			h.refused[src.name] = SourceInfo{Name: src.name, Kind: kindPlugin, Origin: src.origin, Path: spec.Path,
				SHA256: spec.SHA256, State: StateRefused, Error: err.Error(), stamp: src.stamp}
		}
	}
	h.mu.Unlock()
	switch {
	case err != nil && current:
		h.cache.forget(src.name)
		h.log.Error("plugin refused", "plugin", src.name, "err", err)
		h.retire(context.Background(), src)
		return
	case err != nil: // removed or closed meanwhile; nothing started
		return
	case !current || !src.setRunning(in):
		in.stop()
		return
	}
	h.remember(spec, in)
	h.supervised(src)
	h.log.Info("plugin started", "plugin", spec.Name, "version", in.version, "pid", in.pid(), "tools", len(tools))
}

// remember caches what a started plugin described.
func (h *Host) remember(spec PluginSpec, in *instance) {
	if cs, err := in.prov.Describe(context.Background()); err == nil {
		h.cache.store(spec, in.version, cs)
	}
}

// pin checks the spec's fields and fills in SHA256 when it is missing.
func (h *Host) pin(spec PluginSpec) (PluginSpec, error) {
	abs, err := absPath(spec)
	if err != nil {
		return spec, err
	}
	spec.Path = abs
	actual, err := h.sha256Of(spec)
	if err != nil {
		return spec, contracts.Errorf(contracts.CodeInvalidInput, "plugin %q: %w", spec.Name, err).With("field", "path")
	}
	if spec.SHA256 == "" && spec.PinFound {
		spec.SHA256 = actual
	}
	if spec.SHA256 == "" {
		h.log.Warn("plugin has no checksum; pinning the current binary", "plugin", spec.Name, "sha256", actual)
		spec.SHA256 = actual
	}
	want := strings.ToLower(spec.SHA256)
	if _, err := hex.DecodeString(want); err != nil || len(want) != 64 {
		return spec, contracts.Errorf(contracts.CodeInvalidInput, "plugin %q sha256 %q is not 64 hex digits", spec.Name, spec.SHA256).
			With("field", "sha256")
	}
	if want != actual {
		return spec, contracts.Errorf(contracts.CodeChecksumMismatch, "plugin %q: binary sha256 %s does not match %s", spec.Name, actual, want).
			With("expected", want).With("actual", actual)
	}
	spec.SHA256 = want
	return spec, nil
}

// absPath is spec's binary's absolute path.
func absPath(spec PluginSpec) (string, error) {
	if spec.Path == "" {
		return "", contracts.Errorf(contracts.CodeInvalidInput, "plugin %q has no path", spec.Name).With("field", "path")
	}
	abs, err := filepath.Abs(spec.Path)
	if err != nil {
		return "", contracts.Errorf(contracts.CodeInvalidInput, "plugin %q path: %w", spec.Name, err).With("field", "path")
	}
	return abs, nil
}

// sha256Of is the checksum of spec's binary: the contract cache's when its
// entry is for the file as it is now, else the memo's (hashed unless this
// host already read the file as it is). The cache's word spares pin a
// hash; start takes it for the bytes it executes only for a plugin trusted
// as found (PinFound), whose checksum names whatever was found; any other
// is read again before it starts.
func (h *Host) sha256Of(spec PluginSpec) (string, error) {
	if e, ok := h.cache.valid(PluginSpec{Name: spec.Name, Path: spec.Path, Env: spec.Env, Args: spec.Args}); ok {
		if spec.PinFound && spec.SHA256 == "" {
			h.sums.learn(spec.Path, e.Stamp, e.SHA256)
		}
		return e.SHA256, nil
	}
	return h.sums.sha256(spec.Path)
}

// PluginSHA256 is the hex SHA-256 of the executable file at path: the
// checksum a plugin is pinned to.
func PluginSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", path)
	}
	hsh := sha256.New()
	if _, err := io.Copy(hsh, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(hsh.Sum(nil)), nil
}

// start launches one instance of a plugin and connects to it. Unless the
// memo knows the binary's checksum for the file as it is now (this host
// hashed it, or it is trusted as found), go-plugin's SecureConfig reads it
// and checks the checksum right before exec.
func (h *Host) start(ctx context.Context, spec PluginSpec) (*instance, error) {
	dataDir := filepath.Join(h.opts.dataDir, "plugins", spec.Name)
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, contracts.Errorf(contracts.CodePluginRefused, "plugin %q data dir: %w", spec.Name, err)
	}
	var secure *plugin.SecureConfig
	if !h.sums.known(spec.Path, spec.SHA256) {
		sum, _ := hex.DecodeString(spec.SHA256)
		secure = &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()}
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = pluginEnv(dataDir, spec.Env)
	isolate(cmd)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		Plugins:          plugin.PluginSet{sdk.PluginName: &sdk.GRPCPlugin{}},
		Cmd:              cmd,
		SkipHostEnv:      true, // plugins see only pluginEnv, never Ordo's secrets
		SecureConfig:     secure,
		AutoMTLS:         true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     h.opts.startTimeout,
		Logger:           pluginLogger(h.log, spec.Name, contracts.ConcealEnv(spec.Env)),
		GRPCDialOptions:  grpcDialOptions(),
	})
	// A plugin that fails to start leaves nothing behind, children included.
	kill := func() {
		client.Kill()
		if cmd.Process != nil {
			killGroup(cmd.Process.Pid)
		}
	}
	rpc, err := client.Client()
	if err != nil {
		kill()
		return nil, startError(spec.Name, err)
	}
	raw, err := rpc.Dispense(sdk.PluginName)
	if err != nil {
		kill()
		return nil, contracts.Errorf(contracts.CodePluginRefused, "plugin %q: %w", spec.Name, err)
	}
	p := &grpcProvider{name: spec.Name, client: client, rpc: raw.(toolPluginClient), describeTimeout: h.opts.startTimeout}
	if rc := client.ReattachConfig(); rc != nil {
		p.pid = rc.Pid
	}
	version, err := p.version(ctx)
	if err != nil {
		kill()
		return nil, err
	}
	return &instance{prov: p, plugin: p, version: version}, nil
}

// startError codes go-plugin's start failures.
func startError(name string, err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		return contracts.Errorf(contracts.CodeChecksumMismatch, "plugin %q: %w", name, err).With("plugin", name)
	case strings.Contains(msg, "incompatible API version"), strings.Contains(msg, "incompatible core API version"):
		return contracts.Errorf(contracts.CodeProtocolMismatch, "plugin %q speaks another protocol version (host speaks %d): %w",
			name, sdk.Handshake.ProtocolVersion, err).With("plugin", name)
	}
	return contracts.Errorf(contracts.CodePluginRefused, "plugin %q did not start: %w", name, err).With("plugin", name)
}

// pluginEnv is the whole environment of a plugin: a few neutral host
// variables, its data dir, then its own Env (sorted, so it wins).
func pluginEnv(dataDir string, extra map[string]string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "LANG", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "ORDO_PLUGIN_DATA_DIR="+dataDir)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// pluginLogger routes go-plugin's logs, and the plugin's own (its stderr,
// which go-plugin parses when it is hclog JSON), to slog at their levels,
// with what hide conceals (the values of the plugin's configured env: a
// plugin saying "bad key sk-…" must not put its key in Ordo's log) hidden.
// The hclog logger's own output is discarded; its sink hands every entry
// over, whatever its level (only hclog.Off would make go-plugin skip the
// plugin's lines).
func pluginLogger(l *slog.Logger, name string, hide contracts.Concealer) hclog.Logger {
	il := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "plugin." + name, Level: hclog.Error, Output: io.Discard})
	il.RegisterSink(&slogSink{l: l.With("plugin", name), hide: hide, tokens: pluginLogBurst, last: time.Now()})
	return il
}

// A plugin's lines reach Ordo's log at most pluginLogRate a second after a
// burst of pluginLogBurst: one that writes to its stderr as fast as it can
// must not fill Ordo's log and disk.
const (
	pluginLineMax  = 64 << 10 // go-plugin reads a plugin's stderr this much at a time (its default)
	pluginLogBurst = 1000
	pluginLogRate  = 100
)

// slogSink is an hclog sink that logs to slog, within the budget above
// (a token bucket). Lines beyond it are dropped: the first drop of a flood
// is logged, and the count of those dropped at most once a second while
// lines flow.
//
// go-plugin hands a stderr line longer than pluginLineMax over in chunks
// (debug entries of pluginLineMax bytes, or one less, without fields): a
// chunk's end that a value may straddle is held and logged with the next
// entry of the same logger (Concealer.Cut), so a key cut in two is hidden.
type slogSink struct {
	l        *slog.Logger
	hide     contracts.Concealer
	mu       sync.Mutex
	held     string // the end of the last chunk, not logged yet
	heldFrom string // the name of the logger it came from
	tokens   float64
	last     time.Time
	dropped  int
	warned   bool      // the flood's first drop was logged
	reported time.Time // the last count of dropped lines
}

func (s *slogSink) Accept(name string, level hclog.Level, msg string, args ...any) {
	ctx, lvl := context.Background(), slogLevel(level)
	if !s.l.Enabled(ctx, lvl) {
		return
	}
	s.mu.Lock()
	if s.held != "" && name == s.heldFrom {
		msg, s.held = s.held+msg, ""
	}
	if level == hclog.Debug && len(args) == 0 && len(msg) >= pluginLineMax-1 {
		msg, s.held = s.hide.Cut(msg)
		s.heldFrom = name
	} else {
		msg = s.hide.Text(msg)
	}
	now := time.Now()
	s.tokens = min(pluginLogBurst, s.tokens+now.Sub(s.last).Seconds()*pluginLogRate)
	s.last = now
	if s.tokens == pluginLogBurst {
		s.warned = false // the flood is over
	}
	ok, warn, dropped := s.tokens >= 1, false, 0
	if ok {
		s.tokens--
		if s.dropped > 0 && now.Sub(s.reported) >= time.Second {
			dropped, s.dropped, s.reported = s.dropped, 0, now
		}
	} else {
		s.dropped++
		warn, s.warned = !s.warned, true
	}
	s.mu.Unlock()
	if warn {
		s.l.Warn("plugin logs too fast; dropping its lines", "rate", pluginLogRate)
	}
	if dropped > 0 {
		s.l.Warn("plugin log lines dropped", "dropped", dropped)
	}
	if ok {
		s.l.Log(ctx, lvl, msg, s.hidden(pathKey(args))...)
	}
}

// hidden is args with their values' text concealed where it holds a secret.
func (s *slogSink) hidden(args []any) []any {
	for i := 1; i < len(args); i += 2 {
		if text := fmt.Sprint(args[i]); s.hide.Text(text) != text {
			args[i] = s.hide.Text(text)
		}
	}
	return args
}

// pathKey renames go-plugin's "plugin" argument, the binary's path, to
// "path": the sink's logger already names the plugin under "plugin".
func pathKey(args []any) []any {
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] == "plugin" {
			args[i] = "path"
		}
	}
	return args
}

// slogLevel maps an hclog level onto slog's (trace is below debug).
func slogLevel(l hclog.Level) slog.Level {
	switch l {
	case hclog.Trace:
		return slog.LevelDebug - 4
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// supervise restarts the plugin when its process exits or stops answering
// health checks, with exponential backoff, until ctx ends.
func (h *Host) supervise(ctx context.Context, src *source) {
	defer close(src.supDone)
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	lastHealth, upSince := time.Now(), time.Now()
	backoff := h.opts.restartMin
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		}
		in := src.acquire()
		if in == nil {
			continue
		}
		var why error
		if in.plugin.client.Exited() {
			why = errors.New("plugin process exited")
		} else if time.Since(lastHealth) >= h.opts.healthInterval {
			lastHealth = time.Now()
			why = in.plugin.health(ctx, h.opts.startTimeout)
		}
		in.release()
		if why == nil || ctx.Err() != nil {
			continue
		}
		h.log.Warn("plugin down; restarting", "plugin", src.name, "err", why)
		if old := src.setDown(StateRestarting, why); old != nil {
			go h.stopInstance(old)
		}
		if time.Since(upSince) > stableAfter {
			backoff = h.opts.restartMin // a plugin that stayed up a while earns a fast restart
		}
		backoff = h.restart(ctx, src, backoff)
		lastHealth, upSince = time.Now(), time.Now()
	}
}

// restart brings src back, waiting backoff before each try and doubling
// it after each failure; it returns the backoff to use for the next crash.
// A binary whose checksum no longer matches is not retried.
func (h *Host) restart(ctx context.Context, src *source, backoff time.Duration) time.Duration {
	for {
		select {
		case <-ctx.Done():
			return backoff
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, h.opts.restartMax)
		src.mu.Lock()
		src.restarts++
		src.mu.Unlock()
		in, err := h.start(ctx, src.spec)
		if err == nil {
			var tools []*contracts.Tool
			if tools, err = h.describe(ctx, src, in.prov); err == nil {
				err = h.cat.set(src, tools)
			}
			if err != nil {
				in.stop()
			}
		}
		if err != nil {
			state := StateRestarting
			if contracts.CodeOf(err) == contracts.CodeChecksumMismatch {
				state = StateFailed
			}
			src.setDown(state, err)
			h.log.Error("plugin restart failed", "plugin", src.name, "err", err)
			if state == StateFailed {
				<-ctx.Done()
				return backoff
			}
			continue
		}
		if !src.setRunning(in) {
			in.stop()
			return backoff
		}
		h.log.Info("plugin restarted", "plugin", src.name, "pid", in.pid())
		return backoff
	}
}

// stableAfter is how long a plugin must stay up for its restart backoff to
// start again from the minimum.
const stableAfter = 10 * time.Second

// stopInstance drains and stops an instance that left service; calls on a
// dead process fail fast, so the drain is short.
func (h *Host) stopInstance(in *instance) {
	ctx, cancel := context.WithTimeout(context.Background(), h.opts.drainTimeout)
	defer cancel()
	in.drain(ctx)
	in.stop()
}
