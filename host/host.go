package host

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// Host owns the live catalog and every tool source. Its methods are safe
// for concurrent use.
type Host struct {
	opts    options
	log     *slog.Logger
	cat     *catalog
	invoker Invoker

	mu      sync.Mutex
	sources map[string]*source
	refused map[string]SourceInfo // config and directory plugins that could not start
	closed  bool

	watchStop context.CancelFunc
	watchDone chan struct{}

	cache     *contractCache
	sums      *sumMemo
	bringCtx  context.Context // ends at Close: plugins still starting in the background give up
	stopBring context.CancelFunc
	bringing  sync.WaitGroup
	// bringSlots bounds the plugins started in the background at once.
	bringSlots chan struct{}
}

// New builds a host, starts the configured plugins and, with
// WithPluginsDir, loads and then watches the plugins directory. A plugin
// that fails to start is reported by Sources and the log; it does not fail
// New. Call Close to stop every plugin.
func New(opts ...Option) (*Host, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	h := &Host{opts: o, log: o.logger, cat: newCatalog(), sources: map[string]*source{}, refused: map[string]SourceInfo{}}
	// The invocation chain, outermost first. Each layer is one concern.
	h.invoker = Chain(InvokerFunc(h.dispatch), slices.Concat([]Middleware{
		ValidateInput(),           // a bad payload never reaches a tool
		ValidateOutput(),          // the final result, whatever the tool claims
		Retry(o.retry),            // only errors marked retryable, backoff + jitter
		Timeout(o.defaultTimeout), // per attempt; a shorter ctx deadline wins
	}, o.middleware, []Middleware{
		Conceal(), // nearest the tool: no layer above sees a secret it repeats
	})...)
	h.bringCtx, h.stopBring = context.WithCancel(context.Background())
	h.bringSlots = make(chan struct{}, max(1, runtime.NumCPU()-1))
	h.cache = newContractCache(o.dataDir)
	h.sums = newSumMemo()
	// The configured plugins start concurrently. One whose contracts are
	// cached for its binary joins the catalog at once and starts in the
	// background (calls to it wait for it); New waits for the others.
	var wg sync.WaitGroup
	for _, spec := range o.plugins {
		wg.Go(func() {
			if err := h.addPlugin(context.Background(), spec, originConfig); err != nil {
				h.log.Error("plugin refused", "plugin", spec.Name, "err", err)
			}
		})
	}
	wg.Wait()
	for _, spec := range o.upstreams {
		if err := h.addUpstream(context.Background(), spec, originConfig); err != nil {
			h.log.Error("upstream refused", "upstream", spec.Name, "err", err)
		}
	}
	if o.pluginsDir != "" {
		if err := h.startWatch(); err != nil {
			h.Close()
			return nil, err
		}
	}
	return h, nil
}

// Lookup returns a tool's checked contract.
func (h *Host) Lookup(name string) (*contracts.Tool, bool) {
	e, ok := h.cat.lookup(name)
	return e.tool, ok
}

// Available reports whether tool is in the catalog and its source can take
// a call now: false while its plugin restarts or has failed, and while its
// upstream MCP server is down (a call would fail with CodeToolUnavailable).
// The engine refuses plans that use such a tool until it returns.
func (h *Host) Available(tool string) bool {
	e, ok := h.cat.lookup(tool)
	return ok && e.src.available()
}

// Unavailable lists the catalog's tools whose source is down, sorted (see
// Available). It walks the sources, not the tools, so it stays cheap for
// large catalogs.
func (h *Host) Unavailable() []string {
	h.mu.Lock()
	srcs := make([]*source, 0, len(h.sources))
	for _, s := range h.sources {
		srcs = append(srcs, s)
	}
	h.mu.Unlock()
	var out []string
	for _, s := range srcs {
		if !s.available() {
			out = append(out, h.cat.names(s)...)
		}
	}
	sort.Strings(out)
	return out
}

// List returns every tool, sorted by name.
func (h *Host) List() []*contracts.Tool { return h.cat.list() }

// Source says where a tool comes from.
func (h *Host) Source(tool string) (Source, bool) {
	e, ok := h.cat.lookup(tool)
	if !ok {
		return Source{}, false
	}
	return Source{Provider: e.src.name, Version: e.src.currentVersion()}, true
}

// Version is the catalog version; it grows by one per tool change.
func (h *Host) Version() uint64 {
	h.cat.mu.RLock()
	defer h.cat.mu.RUnlock()
	return h.cat.version
}

// Subscribe delivers the current tools as Added events, then every change,
// until ctx ends (the channel is then closed). Events are never dropped.
func (h *Host) Subscribe(ctx context.Context) <-chan CatalogEvent { return h.cat.subscribe(ctx) }

// Call runs tool with payload through the invocation chain: input schema,
// output schema, retries of retryable errors, per-attempt timeout. Errors
// are *contracts.Error: CodeUnknownTool, CodeSchemaViolation,
// CodeToolTimeout, CodeToolCrashed (retried first when the tool is
// idempotent, or idempotent with the call's key), CodeToolFailed
// (Retryable when the tool said so), CodeToolInvalidOutput, CodeToolUnavailable.
func (h *Host) Call(ctx context.Context, tool string, payload json.RawMessage, idempotencyKey string, opts ...CallOption) (json.RawMessage, error) {
	t, ok := h.Lookup(tool)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeUnknownTool, "no tool %q in the catalog", tool).With("tool", tool)
	}
	inv := &Invocation{Tool: t, Payload: payload, IdempotencyKey: idempotencyKey}
	for _, o := range opts {
		o(inv)
	}
	return h.invoker.Invoke(ctx, inv)
}

// dispatch is the innermost invoker: it hands the call to the tool's
// current provider instance and keeps that instance from being stopped
// until the call returns. A call to a restarting plugin waits for it (see
// source.ready); so does a call that found the plugin's process already
// gone (6004: it never reached the plugin), which is issued again once the
// supervisor has restarted it. A call cut off by its plugin's death
// (6002) is retryable when the re-issued call cannot act twice (see
// reissuable); the Retry layer then issues it to the restarted plugin.
func (h *Host) dispatch(ctx context.Context, inv *Invocation) (json.RawMessage, error) {
	name := inv.Tool.Name()
	e, ok := h.cat.lookup(name)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeUnknownTool, "tool %q left the catalog", name).With("tool", name)
	}
	var dead *instance
	for {
		in := e.src.ready(ctx, dead)
		if in == nil {
			err := contracts.Errorf(contracts.CodeToolUnavailable, "%s: provider %q is not running", name, e.src.name).
				With("tool", name).With("provider", e.src.name)
			err.Retryable = true
			return nil, err
		}
		out, err := in.prov.Call(ctx, name, inv.Payload, inv.IdempotencyKey)
		in.release()
		// A tool that repeats its source's configured credentials (a
		// plugin's API_KEY, an upstream's token) shows them to no layer above.
		out, err = e.src.hide.Result(out), e.src.hide.Error(err)
		if err == nil {
			return out, nil
		}
		var ce *contracts.Error
		if !errors.As(err, &ce) {
			return nil, contracts.Errorf(contracts.CodeToolFailed, "%s: %w", name, err).With("tool", name)
		}
		if ce.Code == contracts.CodeToolCrashed && e.src.kind == kindPlugin && reissuable(inv) {
			retry := *ce // a copy: the provider's error stays as it made it
			retry.Retryable = true
			return nil, &retry
		}
		if ce.Code != contracts.CodeToolUnavailable || e.src.kind != kindPlugin || ctx.Err() != nil {
			return nil, err
		}
		dead = in
	}
}

// reissuable reports whether a call that may have acted can be issued
// again: its tool changes nothing, or it promises to act at most once per
// idempotency key (idempotent_with_key) and the call has a key.
func reissuable(inv *Invocation) bool {
	c := inv.Tool.Contract
	return c.Idempotent || c.IdempotentWithKey && inv.IdempotencyKey != ""
}

// AddProvider adds a source of tools under a unique name: the built-in
// tools (see InProcess) or any other ToolProvider. Its tools must not clash
// with tools already in the catalog (CodePluginRefused); a broken contract
// refuses it with CodeInvalidContract.
func (h *Host) AddProvider(ctx context.Context, name, version string, p ToolProvider) error {
	src := newSource(name, kindProvider, originAPI)
	in := &instance{prov: p, version: version}
	if err := h.admit(ctx, src, in); err != nil {
		return err
	}
	src.setRunning(in)
	return nil
}

// admit describes in, checks every contract and registers the source with
// its tools; on failure nothing changes and in is closed.
func (h *Host) admit(ctx context.Context, src *source, in *instance) error {
	if err := checkName(src.name); err != nil {
		in.stop()
		return err
	}
	tools, err := h.describe(ctx, src, in.prov)
	if err != nil {
		in.stop()
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		in.stop()
		return errClosed(src.name)
	}
	if old, dup := h.sources[src.name]; dup && old != src {
		in.stop()
		return errDuplicate(src.name)
	}
	if err := h.cat.set(src, tools); err != nil {
		in.stop()
		return err
	}
	h.sources[src.name] = src
	// Admitted: no longer refused. Cleared here, under the lock that
	// registers it, not after admitPlugin returns: by then a plugin
	// started in the background (bringUp) may have been refused anew.
	// A failed AddPlugin leaves what config or the directory refused.
	delete(h.refused, src.name)
	return nil
}

// nameFree refuses a name a source already has, or one kept for a provider
// (WithReservedNames), before anything is started for it; admit checks
// again under the lock it adds the source with.
func (h *Host) nameFree(name string) error {
	if slices.Contains(h.opts.reserved, name) {
		return contracts.Errorf(contracts.CodePluginRefused, "the name %q is reserved for Ordo's own tools", name).With("name", name)
	}
	h.mu.Lock()
	_, dup := h.sources[name]
	h.mu.Unlock()
	if dup {
		return errDuplicate(name)
	}
	return nil
}

func errDuplicate(name string) error {
	return contracts.Errorf(contracts.CodePluginRefused, "a source named %q already exists", name).With("name", name)
}

// errClosed refuses a source a closed host cannot take. It is a refusal
// like a duplicate name, not 6004: the host will not come back, so a
// caller must not wait and retry.
func errClosed(name string) error {
	return contracts.Errorf(contracts.CodePluginRefused, "host is closed: %q cannot be added", name).With("name", name)
}

// describe asks p, the provider of src, for its contracts and checks each
// one. A tool src already lists keeps its compiled form when its contract
// hash is unchanged, so re-describing an unchanged source (a restart, an
// upstream's re-list, a plugin listed from the cache) compiles nothing.
func (h *Host) describe(ctx context.Context, src *source, p ToolProvider) ([]*contracts.Tool, error) {
	cs, err := p.Describe(ctx)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodePluginRefused, "describe: %w", err)
	}
	return checkContracts(cs, h.cat.listed(src))
}

// checkContracts checks each contract and refuses a name given twice; a
// contract whose hash matches its listed tool (listed may be nil) keeps
// that tool instead of being compiled again.
func checkContracts(cs []contracts.Contract, listed map[string]*contracts.Tool) ([]*contracts.Tool, error) {
	tools := make([]*contracts.Tool, 0, len(cs))
	seen := map[string]bool{}
	for i, c := range cs {
		t := listed[c.Tool]
		if t == nil || t.Hash() != c.Hash() {
			var err error
			if t, err = contracts.NewTool(c); err != nil {
				return nil, contracts.Errorf(contracts.CodeInvalidContract, "contract #%d (%q): %w", i, c.Tool, err).With("tool", c.Tool)
			}
		}
		if seen[t.Name()] {
			return nil, contracts.Errorf(contracts.CodeInvalidContract, "tool %q described twice", t.Name()).With("tool", t.Name())
		}
		seen[t.Name()] = true
		tools = append(tools, t)
	}
	return tools, nil
}

// RemoveSource removes a plugin or provider by name: its tools leave the
// catalog at once, in-flight calls finish (or the drain timeout passes),
// then it is stopped. Unknown names fail with CodeInvalidInput.
func (h *Host) RemoveSource(ctx context.Context, name string) error {
	h.mu.Lock()
	src, ok := h.sources[name]
	if ok {
		delete(h.sources, name)
	}
	h.mu.Unlock()
	if !ok {
		return contracts.Errorf(contracts.CodeInvalidInput, "no tool source named %q", name).With("name", name)
	}
	h.retire(ctx, src)
	return nil
}

// retire takes src's tools out of the catalog, stops its supervisor and
// drains and stops its instance.
func (h *Host) retire(ctx context.Context, src *source) {
	h.cat.drop(src)
	src.shutdown(ctx, h.opts.drainTimeout)
}

// Sources describes every tool source (plugins, in-process providers,
// upstream MCP servers, and those refused), sorted by name.
func (h *Host) Sources() []SourceInfo {
	h.mu.Lock()
	srcs := make([]*source, 0, len(h.sources))
	for _, s := range h.sources {
		srcs = append(srcs, s)
	}
	refused := make([]SourceInfo, 0, len(h.refused))
	for _, info := range h.refused {
		refused = append(refused, info)
	}
	h.mu.Unlock()
	out := make([]SourceInfo, 0, len(srcs))
	for _, s := range srcs {
		info := s.info()
		info.Tools = h.cat.names(s)
		out = append(out, info)
	}
	out = append(out, refused...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Close stops watching, then drains and stops every source in parallel.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	srcs := h.sources
	h.sources = map[string]*source{}
	h.mu.Unlock()
	if h.watchStop != nil {
		h.watchStop()
		<-h.watchDone
	}
	h.stopBring()
	h.bringing.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), h.opts.drainTimeout+5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range srcs {
		wg.Go(func() { h.retire(ctx, s) })
	}
	wg.Wait()
	return nil
}
