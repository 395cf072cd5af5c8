package host

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ordo-run/ordo/contracts"
)

// EventKind says how a tool changed.
type EventKind string

// Catalog event kinds.
const (
	Added   EventKind = "added"
	Removed EventKind = "removed"
	Changed EventKind = "changed"
)

// CatalogEvent is one tool's change. Version is the catalog version after
// the change, so a subscriber can tell which events it has already seen.
// Hash is the contract's content hash (contracts.Tool.Hash, computed when
// the tool was compiled): a subscriber that keeps it tells a changed tool
// from a re-offered one by comparing hashes, without hashing or comparing
// contracts itself.
type CatalogEvent struct {
	Kind     EventKind          `json:"kind"`
	Tool     string             `json:"tool"`
	Contract contracts.Contract `json:"contract"`
	Hash     string             `json:"hash"`
	Version  uint64             `json:"version"`
}

// event is the catalog event kind for t.
func event(kind EventKind, t *contracts.Tool) CatalogEvent {
	return CatalogEvent{Kind: kind, Tool: t.Name(), Contract: t.Contract, Hash: t.Hash()}
}

// Source is where a catalog tool comes from.
type Source struct {
	Provider string `json:"provider"` // plugin or provider name
	Version  string `json:"version,omitempty"`
}

type catEntry struct {
	tool *contracts.Tool
	src  *source
}

// catalog maps tool names to their source. Every change bumps version and
// is sent to subscribers, in order.
type catalog struct {
	mu      sync.RWMutex
	tools   map[string]catEntry
	version uint64
	subs    map[*subscriber]struct{}
}

func newCatalog() *catalog {
	return &catalog{tools: map[string]catEntry{}, subs: map[*subscriber]struct{}{}}
}

func (c *catalog) lookup(name string) (catEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.tools[name]
	return e, ok
}

func (c *catalog) list() []*contracts.Tool {
	c.mu.RLock()
	out := make([]*contracts.Tool, 0, len(c.tools))
	for _, e := range c.tools {
		out = append(out, e.tool)
	}
	c.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// listed maps the names of src's tools to their compiled tools.
func (c *catalog) listed(src *source) map[string]*contracts.Tool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := map[string]*contracts.Tool{}
	for n, e := range c.tools {
		if e.src == src {
			out[n] = e.tool
		}
	}
	return out
}

// names lists the tools of src, sorted.
func (c *catalog) names(src *source) []string {
	return slices.Sorted(maps.Keys(c.listed(src)))
}

// set makes tools the complete set src supplies, emitting Added, Changed
// and Removed events for the difference; a tool whose contract hash is
// unchanged emits nothing, so setting an unchanged set is a no-op. A tool outside a plugin's
// namespace, or a tool name owned by another source, refuses the whole set
// with CodePluginRefused and changes nothing.
func (c *catalog) set(src *source, tools []*contracts.Tool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	want := make(map[string]*contracts.Tool, len(tools))
	for _, t := range tools {
		if err := inNamespace(src, t); err != nil {
			return err
		}
		if e, ok := c.tools[t.Name()]; ok && e.src != src {
			return contracts.Errorf(contracts.CodePluginRefused, "tool %q is already provided by %q", t.Name(), e.src.name).
				With("tool", t.Name()).With("provider", e.src.name)
		}
		want[t.Name()] = t
	}
	var events []CatalogEvent
	for name, e := range c.tools {
		if e.src == src && want[name] == nil {
			delete(c.tools, name)
			events = append(events, event(Removed, e.tool))
		}
	}
	for name, t := range want {
		old, had := c.tools[name]
		c.tools[name] = catEntry{tool: t, src: src}
		switch {
		case !had:
			events = append(events, event(Added, t))
		case old.tool.Hash() != t.Hash():
			events = append(events, event(Changed, t))
		}
	}
	sort.Slice(events, func(i, j int) bool { return events[i].Tool < events[j].Tool })
	c.publish(events)
	return nil
}

// inNamespace keeps a plugin to its own service namespace: plugin "shout"
// may add shout.* (services shout and shout.x), so no plugin can stand in
// for another's tools, whichever of them starts first.
func inNamespace(src *source, t *contracts.Tool) error {
	svc := t.Contract.Service
	if src.kind != kindPlugin || svc == src.name || strings.HasPrefix(svc, src.name+".") {
		return nil
	}
	return contracts.Errorf(contracts.CodePluginRefused, "plugin %q may add only tools named %s.*, not %s (service %q)",
		src.name, src.name, t.Name(), svc).With("plugin", src.name).With("tool", t.Name())
}

// drop removes every tool of src.
func (c *catalog) drop(src *source) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var events []CatalogEvent
	for name, e := range c.tools {
		if e.src == src {
			delete(c.tools, name)
			events = append(events, event(Removed, e.tool))
		}
	}
	sort.Slice(events, func(i, j int) bool { return events[i].Tool < events[j].Tool })
	c.publish(events)
}

// publish numbers events and queues them for subscribers; c.mu is held.
func (c *catalog) publish(events []CatalogEvent) {
	for i := range events {
		c.version++
		events[i].Version = c.version
	}
	for s := range c.subs {
		s.push(events)
	}
}

// subscribe replays the current tools as Added events (at the current
// version) and then delivers every change until ctx ends. A slow reader
// never blocks the catalog: events queue per subscriber.
func (c *catalog) subscribe(ctx context.Context) <-chan CatalogEvent {
	s := &subscriber{wake: make(chan struct{}, 1), out: make(chan CatalogEvent)}
	c.mu.Lock()
	names := make([]string, 0, len(c.tools))
	for n := range c.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	initial := make([]CatalogEvent, 0, len(names))
	for _, n := range names {
		ev := event(Added, c.tools[n].tool)
		ev.Version = c.version
		initial = append(initial, ev)
	}
	s.push(initial)
	c.subs[s] = struct{}{}
	c.mu.Unlock()
	go func() {
		s.pump(ctx)
		c.mu.Lock()
		delete(c.subs, s)
		c.mu.Unlock()
		close(s.out)
	}()
	return s.out
}

type subscriber struct {
	mu    sync.Mutex
	queue []CatalogEvent
	wake  chan struct{}
	out   chan CatalogEvent
}

func (s *subscriber) push(events []CatalogEvent) {
	if len(events) == 0 {
		return
	}
	s.mu.Lock()
	s.queue = append(s.queue, events...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) pump(ctx context.Context) {
	for {
		s.mu.Lock()
		batch := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, ev := range batch {
			select {
			case s.out <- ev:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return
		}
	}
}
