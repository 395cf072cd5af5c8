package host

import (
	"context"
	"regexp"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Kinds and origins of sources, as SourceInfo reports them.
const (
	kindPlugin   = "plugin"   // a go-plugin process
	kindProvider = "provider" // a ToolProvider given through AddProvider

	originConfig = "config" // WithPlugins
	originDir    = "dir"    // found in the plugins directory
	originAPI    = "api"    // AddPlugin / AddProvider
)

// Plugin states.
const (
	StateStarting   = "starting" // listed from cached contracts while its process starts; calls wait for it
	StateRunning    = "running"
	StateRestarting = "restarting" // crashed or unhealthy; calls fail with CodeToolUnavailable
	StateFailed     = "failed"     // cannot be restarted (e.g. its binary changed); tools stay unavailable
	StateRefused    = "refused"    // never admitted; Error says why
)

// SourceInfo describes one tool source for admin commands.
type SourceInfo struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`   // plugin | provider
	Origin   string   `json:"origin"` // config | dir | api
	Path     string   `json:"path,omitempty"`
	SHA256   string   `json:"sha256,omitempty"`
	Version  string   `json:"version,omitempty"`
	State    string   `json:"state"`
	PID      int      `json:"pid,omitempty"`
	Restarts int      `json:"restarts"`
	Tools    []string `json:"tools,omitempty"`
	Error    string   `json:"error,omitempty"`

	stamp string // a refused directory plugin: retried only when its files change
}

// namePattern is a source's name: no dot, since a plugin's name is the
// service of its tools and a dotted name would be a sub-service of another
// plugin's (a plugin "notes.x" adding notes.x.* tools under notes.*).
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

func checkName(name string) error {
	if !namePattern.MatchString(name) {
		return contracts.Errorf(contracts.CodeInvalidInput, "plugin name %q must match %s", name, namePattern).With("field", "name")
	}
	return nil
}

// instance is one running incarnation of a source. Calls hold it so that
// stopping it can wait for them (drain).
type instance struct {
	prov    ToolProvider
	plugin  *grpcProvider  // prov, when a plugin process (nil otherwise)
	up      UpstreamSource // prov, when an upstream server (nil otherwise)
	version string

	mu       sync.Mutex
	inflight int
	idle     chan struct{} // closed when inflight drops to 0 during a drain
}

func (in *instance) hold() {
	in.mu.Lock()
	in.inflight++
	in.mu.Unlock()
}

func (in *instance) release() {
	in.mu.Lock()
	in.inflight--
	if in.inflight == 0 && in.idle != nil {
		close(in.idle)
		in.idle = nil
	}
	in.mu.Unlock()
}

// drain waits until no call holds the instance or ctx ends.
func (in *instance) drain(ctx context.Context) {
	in.mu.Lock()
	if in.inflight == 0 {
		in.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	in.idle = ch
	in.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// stop closes the provider (a plugin process is killed).
func (in *instance) stop() { _ = in.prov.Close() }

func (in *instance) pid() int {
	if in.plugin == nil {
		return 0
	}
	return in.plugin.pid
}

// source is a named supplier of tools and its current instance.
type source struct {
	name   string
	kind   string
	origin string
	spec   PluginSpec // plugins only; SHA256 is set once admitted, or once pinned by bringUp (PluginSpec.Contracts)
	path   string     // what Sources shows: a plugin's binary, an upstream's command or URL
	stamp  string     // directory plugins: what the file looked like when loaded

	hide contracts.Concealer // its configured credentials, hidden in its answers (answerSecrets)

	mu       sync.Mutex
	cur      *instance // nil while restarting or after shutdown
	version  string
	state    string
	lastErr  string
	restarts int
	retired  bool
	stopSup  context.CancelFunc
	supDone  chan struct{}
	// changed is closed (and replaced) whenever cur or state changes, so a
	// call can wait for a restarting plugin.
	changed chan struct{}
	// wanted is closed when a call first waits for the source while it is
	// starting: its process starts then, whatever holds it back (bringUp).
	wanted     chan struct{}
	wantedOnce sync.Once
}

func newSource(name, kind, origin string) *source {
	return &source{name: name, kind: kind, origin: origin, changed: make(chan struct{}), wanted: make(chan struct{})}
}

// changedLocked wakes the calls waiting in ready; s.mu is held.
func (s *source) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// acquire returns the running instance, held for one call, or nil.
func (s *source) acquire() *instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return nil
	}
	s.cur.hold()
	return s.cur
}

// ready returns the instance to call, held, or nil. A plugin's supervisor
// replaces a dead process, so for a plugin it waits while the plugin
// restarts, and while dead (which a call did not reach) is still current,
// until ctx ends, and starts one listed from the cache whose start is held
// back (see WithStartGate); it gives up at once on a plugin that failed
// for good or was removed. Other sources are not waited for.
func (s *source) ready(ctx context.Context, dead *instance) *instance {
	for {
		s.mu.Lock()
		cur, ch := s.cur, s.changed
		if cur != nil && cur != dead {
			cur.hold()
			s.mu.Unlock()
			return cur
		}
		gone := s.kind != kindPlugin || s.retired || s.state == StateFailed
		starting := s.state == StateStarting
		s.mu.Unlock()
		if gone {
			return nil
		}
		if starting {
			s.wantedOnce.Do(func() { close(s.wanted) })
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
	}
}

// setRunning installs in as the current instance. It reports false (and
// the caller must stop in) once the source is retired.
func (s *source) setRunning(in *instance) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired {
		return false
	}
	s.cur, s.version, s.state, s.lastErr = in, in.version, StateRunning, ""
	s.changedLocked()
	return true
}

// pinned records the checksum bringUp pinned src's binary to (Sources
// shows it).
func (s *source) pinned(spec PluginSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.spec = spec
}

// setDown takes the current instance away (calls now fail as
// unavailable) and records why; it returns the old instance.
func (s *source) setDown(state string, err error) *instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur
	s.cur, s.state = nil, state
	if err != nil {
		s.lastErr = err.Error()
	}
	s.changedLocked()
	return old
}

// available reports whether a call to the source would reach a provider.
func (s *source) available() bool {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.state == StateStarting // a call waits for it
	}
	return cur.up == nil || cur.up.Connected() // an upstream stays installed while down
}

func (s *source) currentVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

func (s *source) info() SourceInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := SourceInfo{Name: s.name, Kind: s.kind, Origin: s.origin, Path: s.path, SHA256: s.spec.SHA256,
		Version: s.version, State: s.state, Restarts: s.restarts, Error: s.lastErr}
	if s.cur != nil {
		info.PID = s.cur.pid()
	}
	return info
}

// shutdown stops the supervisor, then drains the current instance (up to
// drainTimeout) and stops it.
func (s *source) shutdown(ctx context.Context, drainTimeout time.Duration) {
	s.mu.Lock()
	s.retired = true
	cur := s.cur
	s.cur = nil
	s.state = "stopped"
	s.changedLocked()
	stop, done := s.stopSup, s.supDone
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	if cur == nil {
		return
	}
	dctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	cur.drain(dctx)
	cur.stop()
}
