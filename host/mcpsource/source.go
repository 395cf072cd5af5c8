package mcpsource

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/tracemeta"
)

// DefaultPollInterval is the re-list period when an UpstreamSpec sets none.
const DefaultPollInterval = 30 * time.Second

// stableAfter is how long a connection must last for the backoff to
// start again from RestartMin.
const stableAfter = 10 * time.Second

// RelistGap is the least time between two re-lists that tools/list_changed
// or a failed call asks for: an upstream that changes its list without
// pause is read once per gap (the changes in between coalesce), not as
// fast as it answers. Each re-list is converted and compiled, and each
// change re-indexed and sent on to every gateway client.
const RelistGap = time.Second

// IdempotencyMetaKey carries the step's idempotency key in the _meta of
// every tools/call, for upstreams that care.
const IdempotencyMetaKey = "ordo/idempotency_key"

// Source is a live upstream MCP server as a host.UpstreamSource. It is
// safe for concurrent use.
type Source struct {
	spec host.UpstreamSpec
	opts host.UpstreamOptions
	log  *slog.Logger

	mu       sync.Mutex
	conn     *conn // nil while down
	tools    toolSet
	lastErr  string
	restarts int
	upSince  time.Time

	changed chan struct{} // to the host: re-read Status and Describe (capacity 1)
	nudge   chan struct{} // a call failed oddly: re-list now (capacity 1)
	stop    context.CancelFunc
	done    chan struct{}
	closing sync.WaitGroup // conns being closed in the background
	once    sync.Once
}

// Open is the host.UpstreamOpener for MCP servers: it checks spec,
// connects, reads the tool list and starts supervising. Errors:
// CodeInvalidInput (bad spec, naming the field) and, unless opts.Lazy,
// CodePluginRefused when the upstream cannot be reached. opts come from
// the host, every field set.
func Open(ctx context.Context, spec host.UpstreamSpec, opts host.UpstreamOptions) (host.UpstreamSource, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	s := &Source{spec: spec, opts: opts, log: opts.Logger, changed: make(chan struct{}, 1),
		nudge: make(chan struct{}, 1), done: make(chan struct{})}
	c, set, err := s.connect(ctx)
	if err != nil {
		if !opts.Lazy {
			return nil, contracts.Errorf(contracts.CodePluginRefused, "upstream %q (%s) did not start: %w", spec.Name, spec.Transport(), err).
				With("upstream", spec.Name)
		}
		s.log.Warn("upstream not reachable yet; will retry", "err", err)
		s.lastErr = err.Error()
	} else {
		s.install(c, set)
	}
	sctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go s.run(sctx)
	return s, nil
}

// connect dials and lists, within StartTimeout.
func (s *Source) connect(ctx context.Context) (*conn, toolSet, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	c, err := dial(ctx, s.spec, s.log)
	if err != nil {
		return nil, toolSet{}, err
	}
	tools, err := c.list(ctx)
	if err != nil {
		c.close()
		return nil, toolSet{}, err
	}
	set := buildTools(s.spec.Name, tools, s.spec.Overrides)
	for _, sk := range set.skipped {
		s.log.Warn("upstream tool skipped", "tool", sk.Tool, "err", sk.Error)
	}
	return c, set, nil
}

func (s *Source) install(c *conn, set toolSet) {
	s.mu.Lock()
	if !s.upSince.IsZero() {
		s.restarts++
	}
	s.conn, s.tools, s.lastErr, s.upSince = c, set, "", time.Now()
	s.mu.Unlock()
	s.log.Info("upstream connected", "server", c.server, "protocol", c.proto, "pid", c.pid(), "tools", len(set.contracts))
}

// run keeps the source connected and its tool list current until ctx ends.
func (s *Source) run(ctx context.Context) {
	defer close(s.done)
	poll := time.NewTicker(cmp.Or(s.spec.PollInterval, DefaultPollInterval))
	defer poll.Stop()
	backoff := s.opts.RestartMin
	var listed time.Time // the last re-list
	for {
		s.mu.Lock()
		c, up := s.conn, s.upSince
		s.mu.Unlock()
		if c == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, s.opts.RestartMax)
			nc, set, err := s.connect(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.setErr(err)
				}
				continue
			}
			s.install(nc, set)
			s.signal()
			continue
		}
		if time.Since(up) > stableAfter {
			backoff = s.opts.RestartMin
		}
		select {
		case <-ctx.Done():
			return
		case <-c.dead:
		case <-c.changed:
			afterGap(ctx, c, listed)
		case <-s.nudge:
			afterGap(ctx, c, listed)
		case <-poll.C:
		}
		select {
		case <-ctx.Done():
			return
		case <-c.dead:
			s.down(c, c.proc.exitErr())
			continue
		default:
		}
		s.relist(ctx, c)
		listed = time.Now()
	}
}

// afterGap returns once RelistGap has passed since listed (the last
// re-list), c died or ctx ended.
func afterGap(ctx context.Context, c *conn, listed time.Time) {
	select {
	case <-ctx.Done():
	case <-c.dead:
	case <-time.After(RelistGap - time.Since(listed)):
	}
}

// relist re-reads the tool list; a failure means the upstream is down.
func (s *Source) relist(ctx context.Context, c *conn) {
	lctx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	defer cancel()
	tools, err := c.list(lctx)
	if err != nil {
		if ctx.Err() == nil {
			s.down(c, err)
		}
		return
	}
	// An unchanged list (the usual poll) is not converted and compiled again.
	s.mu.Lock()
	same := hashTools(tools) == s.tools.hash
	s.mu.Unlock()
	if same {
		return
	}
	set := buildTools(s.spec.Name, tools, s.spec.Overrides)
	s.mu.Lock()
	s.tools = set
	s.mu.Unlock()
	s.log.Info("upstream tools changed", "tools", len(set.contracts), "skipped", len(set.skipped))
	s.signal()
}

// down retires c (its tools stay listed, calls fail as unavailable) and
// closes it in the background.
func (s *Source) down(c *conn, why error) {
	s.mu.Lock()
	if s.conn != c {
		s.mu.Unlock()
		return
	}
	s.conn, s.lastErr = nil, why.Error()
	s.closing.Add(1)
	s.mu.Unlock()
	s.log.Warn("upstream down; reconnecting", "err", why)
	go func() {
		defer s.closing.Done()
		c.close()
	}()
	s.signal()
}

func (s *Source) setErr(err error) {
	s.mu.Lock()
	changed := s.lastErr != err.Error()
	s.lastErr = err.Error()
	s.mu.Unlock()
	if changed {
		s.log.Warn("upstream reconnect failed", "err", err)
		s.signal()
	}
}

func (s *Source) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Changed receives a value whenever the tool list or the connection state
// may have changed; read Status and Describe then. Signals coalesce.
func (s *Source) Changed() <-chan struct{} { return s.changed }

// Describe returns the contracts of the upstream's tools as last listed
// (also while it is down: its tools stay known, calls fail as unavailable).
func (s *Source) Describe(context.Context) ([]contracts.Contract, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools.contracts), nil
}

// Call runs one upstream tool. Errors: CodeToolUnavailable (the upstream
// is down or the connection failed; retryable unless the request may have
// reached a tool that is not idempotent), CodeToolCrashed (its
// process died during the call), CodeToolFailed (an isError answer, with
// the upstream's text, or a protocol error), CodeUnknownTool (the upstream
// no longer lists it).
func (s *Source) Call(ctx context.Context, tool string, payload json.RawMessage, key string) (json.RawMessage, error) {
	s.mu.Lock()
	c, name, known := s.conn, s.tools.upstream[tool], s.tools.upstream[tool] != ""
	s.mu.Unlock()
	switch {
	case !known:
		return nil, contracts.Errorf(contracts.CodeUnknownTool, "upstream %q does not list %q", s.spec.Name, tool).
			With("tool", tool).With("upstream", s.spec.Name)
	case c == nil:
		return nil, s.unavailable(tool, nil)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	if len(payload) > 0 {
		req.Params.Arguments = payload
	}
	if key != "" {
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{IdempotencyMetaKey: key}}
	}
	// The call continues Ordo's trace on the upstream when it traces
	// (nothing is added while tracing is off).
	req.Params.Meta = tracemeta.Inject(ctx, req.Params.Meta)
	res, err := c.client.CallTool(ctx, req)
	if err != nil {
		return nil, s.callError(ctx, c, tool, err)
	}
	if res.IsError {
		return nil, toolError(s.spec.Name, tool, res)
	}
	out, err := resultValue(res)
	if err != nil {
		return nil, contracts.Errorf(contracts.CodeToolInvalidOutput, "%s: %w", tool, err).With("tool", tool)
	}
	return out, nil
}

// callError codes a failed tools/call and, when the failure says something
// about the upstream's health or tool list, asks run to look now.
func (s *Source) callError(ctx context.Context, c *conn, tool string, err error) error {
	if ctx.Err() != nil {
		return err // the caller's deadline or cancellation; the host codes it
	}
	select {
	case s.nudge <- struct{}{}:
	default:
	}
	if c.proc != nil {
		select {
		case <-c.dead:
			return contracts.Errorf(contracts.CodeToolCrashed, "%s: %w", tool, c.proc.exitErr()).With("tool", tool).With("upstream", s.spec.Name)
		case <-time.After(50 * time.Millisecond):
		}
	}
	var te *transport.Error
	if errors.As(err, &te) {
		// The upstream is unreachable or went away mid-call. A retry is safe
		// when the request never left (dial failed) or the tool says
		// repeating it changes nothing.
		var op *net.OpError
		e := s.unavailable(tool, err)
		e.Retryable = errors.As(err, &op) && op.Op == "dial" || s.idempotent(tool)
		return e
	}
	if strings.Contains(err.Error(), refusedAnswer) {
		return contracts.Errorf(contracts.CodeToolInvalidOutput, "%s: upstream %q: %w", tool, s.spec.Name, err).
			With("tool", tool).With("upstream", s.spec.Name)
	}
	return contracts.Errorf(contracts.CodeToolFailed, "%s: upstream %q answered with an error: %w", tool, s.spec.Name, err).
		With("tool", tool).With("upstream", s.spec.Name)
}

func (s *Source) idempotent(tool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.tools.contracts {
		if c.Tool == tool {
			return c.Idempotent
		}
	}
	return false
}

func (s *Source) unavailable(tool string, cause error) *contracts.Error {
	s.mu.Lock()
	why := s.lastErr
	s.mu.Unlock()
	if cause != nil {
		why = cause.Error()
	}
	e := contracts.Errorf(contracts.CodeToolUnavailable, "%s: upstream %q is down: %s", tool, s.spec.Name, why).
		With("tool", tool).With("upstream", s.spec.Name)
	e.Retryable = true
	return e
}

// Connected reports whether the upstream is connected now; while it is
// not, calls fail with CodeToolUnavailable.
func (s *Source) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn != nil
}

// Status reports the current state.
func (s *Source) Status() host.UpstreamStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := host.UpstreamStatus{Name: s.spec.Name, Transport: s.spec.Transport(), Command: slices.Clone(s.spec.Command), URL: host.ShownURL(s.spec.URL),
		Restarts: s.restarts, ToolsHash: s.tools.hash, Skipped: slices.Clone(s.tools.skipped), Error: s.lastErr}
	if s.conn != nil {
		info.Connected, info.PID, info.Server, info.Protocol = true, s.conn.pid(), s.conn.server, s.conn.proto
	}
	return info
}

// Close stops supervising and ends the session (a process is stopped).
func (s *Source) Close() error {
	s.once.Do(func() {
		s.stop()
		<-s.done
		s.mu.Lock()
		c := s.conn
		s.conn = nil
		s.mu.Unlock()
		if c != nil {
			c.close()
		}
		s.closing.Wait()
	})
	return nil
}
