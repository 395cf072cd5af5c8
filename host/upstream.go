package host

import (
	"context"
	"log/slog"
	"sort"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// UpstreamSource is a live upstream tool server as the host mounts it: a
// ToolProvider that stays installed while its server is down (calls then
// fail with CodeToolUnavailable), reports its state, and signals when its
// tools or health moved. The host never speaks the server's protocol: an
// UpstreamOpener (package mcpsource's Open, for MCP) makes the source.
type UpstreamSource interface {
	ToolProvider
	// Changed receives a value whenever the tools or the connection may
	// have changed; the host then re-reads Status and Describe. Signals
	// coalesce.
	Changed() <-chan struct{}
	// Connected reports whether a call can reach the server now.
	Connected() bool
	// Status reports the current state for admin listings.
	Status() UpstreamStatus
}

// UpstreamOpener checks spec, connects and starts following the server.
// Errors: CodeInvalidInput (bad spec, naming the field) and, unless
// opts.Lazy, CodePluginRefused when the server cannot be reached (leaving
// nothing running).
type UpstreamOpener func(ctx context.Context, spec UpstreamSpec, opts UpstreamOptions) (UpstreamSource, error)

// UpstreamOptions are the host's settings an UpstreamOpener follows.
type UpstreamOptions struct {
	Logger *slog.Logger
	// StartTimeout bounds connecting, the handshake and one tool listing.
	StartTimeout time.Duration
	// RestartMin and RestartMax bound the reconnect backoff, which
	// doubles per failure.
	RestartMin, RestartMax time.Duration
	// Lazy makes the opener succeed even when the first connection fails:
	// the source starts down, without tools, and keeps trying (upstreams
	// declared in configuration). Otherwise it fails and leaves nothing
	// running (admin commands).
	Lazy bool
}

// UpstreamStatus is what an upstream source reports of itself. It never
// holds Env values, the bearer token or a key in the URL (URL is ShownURL).
type UpstreamStatus struct {
	Name      string        `json:"name"`
	Transport string        `json:"transport"` // stdio | http
	Command   []string      `json:"command,omitempty"`
	URL       string        `json:"url,omitempty"`
	Connected bool          `json:"connected"`
	PID       int           `json:"pid,omitempty"`
	Server    string        `json:"server,omitempty"`   // name/version the upstream reported
	Protocol  string        `json:"protocol,omitempty"` // protocol version in use
	Restarts  int           `json:"restarts"`           // reconnections after the first
	ToolsHash string        `json:"tools_hash,omitempty"`
	Skipped   []SkippedTool `json:"skipped,omitempty"`
	Error     string        `json:"error,omitempty"` // why it is (or last was) down
}

// SkippedTool is an upstream tool left out of the catalog and why (its
// schema does not compile, say). The rest of the upstream still serves.
type SkippedTool struct {
	Tool  string `json:"tool"`
	Error string `json:"error"`
}

// UpstreamInfo describes an upstream source for admin commands.
type UpstreamInfo struct {
	UpstreamStatus
	Origin string   `json:"origin"` // config | api
	State  string   `json:"state"`  // running | restarting | refused
	Tools  []string `json:"tools,omitempty"`
}

const kindUpstream = "upstream"

// WithUpstreamOpener sets how the host mounts upstream servers (for MCP,
// mcpsource.Open); without it, WithUpstreams fails New and AddUpstream
// fails with CodePluginRefused.
func WithUpstreamOpener(open UpstreamOpener) Option {
	return func(o *options) { o.openUpstream = open }
}

// WithUpstreams declares upstream MCP servers (from configuration) to
// mount in New with the WithUpstreamOpener opener. One that cannot be
// reached yet is kept, without tools, and retried with backoff; one with a
// bad spec is reported by Sources and Upstreams as refused.
func WithUpstreams(specs ...UpstreamSpec) Option {
	return func(o *options) { o.upstreams = append(o.upstreams, specs...) }
}

// AddUpstream mounts an upstream MCP server: its tools join the catalog as
// NAME.tool. It fails, leaving nothing running, with CodeInvalidInput (bad
// spec, naming the field), CodePluginRefused (unreachable, duplicate name
// or a tool name clash). Remove it with RemoveSource or RemoveUpstream.
func (h *Host) AddUpstream(ctx context.Context, spec UpstreamSpec) error {
	return h.addUpstream(ctx, spec, originAPI)
}

// RemoveUpstream removes an upstream by name like RemoveSource, but only
// an upstream (CodeInvalidInput otherwise).
func (h *Host) RemoveUpstream(ctx context.Context, name string) error {
	h.mu.Lock()
	src, ok := h.sources[name]
	h.mu.Unlock()
	if !ok || src.kind != kindUpstream {
		return contracts.Errorf(contracts.CodeInvalidInput, "no upstream named %q", name).With("name", name)
	}
	return h.RemoveSource(ctx, name)
}

func (h *Host) addUpstream(ctx context.Context, spec UpstreamSpec, origin string) error {
	err := h.admitUpstream(ctx, spec, origin)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil && origin != originAPI {
		h.refused[spec.Name] = SourceInfo{Name: spec.Name, Kind: kindUpstream, Origin: origin, Path: spec.path(),
			State: StateRefused, Error: err.Error()}
	} else if err == nil {
		delete(h.refused, spec.Name)
	}
	return err
}

func (h *Host) admitUpstream(ctx context.Context, spec UpstreamSpec, origin string) error {
	if err := spec.Check(); err != nil {
		return err
	}
	h.warnShortSecrets("upstream", spec.Name, spec.Env, map[string]string{"bearer_token": spec.BearerToken, "url_secret": spec.URLSecret})
	if err := h.nameFree(spec.Name); err != nil {
		return err
	}
	if h.opts.openUpstream == nil {
		return contracts.Errorf(contracts.CodePluginRefused, "upstream %q: this host mounts no upstream servers (no WithUpstreamOpener)", spec.Name).
			With("upstream", spec.Name)
	}
	p, err := h.opts.openUpstream(ctx, spec, UpstreamOptions{
		Logger:       h.log.With("upstream", spec.Name),
		StartTimeout: h.opts.startTimeout,
		RestartMin:   h.opts.restartMin,
		RestartMax:   h.opts.restartMax,
		Lazy:         origin == originConfig,
	})
	if err != nil {
		return err
	}
	src := newSource(spec.Name, kindUpstream, origin)
	src.path, src.hide = spec.path(), answerSecrets(spec.Env, spec.AnswerSecrets()...)
	in := &instance{prov: p, up: p, version: p.Status().Server}
	if err := h.admit(ctx, src, in); err != nil {
		return err
	}
	// The source's instance stays installed for the upstream's lifetime:
	// the Source itself answers CodeToolUnavailable while it is down, so
	// syncUpstream only mirrors its state for Sources.
	src.setRunning(in)
	h.syncUpstream(src, p) // re-read once: the list may have moved since admit described it
	sctx, stop := context.WithCancel(context.Background())
	src.mu.Lock()
	src.stopSup, src.supDone = stop, make(chan struct{})
	src.mu.Unlock()
	go h.followUpstream(sctx, src, p)
	return nil
}

// followUpstream applies the upstream's changes (tools, health) to the
// catalog and the source until ctx ends (removal or Close).
func (h *Host) followUpstream(ctx context.Context, src *source, p UpstreamSource) {
	defer close(src.supDone)
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.Changed():
			h.syncUpstream(src, p)
		}
	}
}

// syncUpstream mirrors p's state into src and diffs the catalog against
// p's tools (emitting Added, Changed, Removed). A signal that changed no
// tool (a reconnection) costs one contract hash per tool: describe keeps
// the compiled tools and the catalog emits nothing.
func (h *Host) syncUpstream(src *source, p UpstreamSource) {
	info := p.Status()
	src.mu.Lock()
	if !src.retired {
		src.state, src.lastErr, src.restarts = StateRunning, info.Error, info.Restarts
		if info.Connected {
			src.version = info.Server
		} else {
			src.state = StateRestarting
		}
	}
	src.mu.Unlock()
	tools, err := h.describe(context.Background(), src, p)
	if err == nil {
		err = h.cat.set(src, tools)
	}
	if err != nil {
		h.log.Error("upstream tools not applied", "upstream", src.name, "err", err)
	}
}

// Upstreams describes every upstream source (including refused ones),
// sorted by name.
func (h *Host) Upstreams() []UpstreamInfo {
	h.mu.Lock()
	var srcs []*source
	for _, s := range h.sources {
		if s.kind == kindUpstream {
			srcs = append(srcs, s)
		}
	}
	var out []UpstreamInfo
	for _, r := range h.refused {
		if r.Kind == kindUpstream {
			out = append(out, UpstreamInfo{UpstreamStatus: UpstreamStatus{Name: r.Name, Error: r.Error}, Origin: r.Origin, State: r.State})
		}
	}
	h.mu.Unlock()
	for _, s := range srcs {
		s.mu.Lock()
		cur, state, origin := s.cur, s.state, s.origin
		s.mu.Unlock()
		if cur == nil {
			continue
		}
		out = append(out, UpstreamInfo{UpstreamStatus: cur.up.Status(), Origin: origin, State: state, Tools: h.cat.names(s)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
