package mcpsource

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/internal/jsonbound"
)

// clientVersion is the client version Ordo announces in the handshake.
const clientVersion = "dev"

// conn is one session with an upstream: one process, or one HTTP session.
// A dead conn is replaced, never revived.
type conn struct {
	client   *client.Client
	proc     *proc         // stdio only
	dead     chan struct{} // closed when the process exits; never for HTTP
	changed  chan struct{} // tools/list_changed arrived (capacity 1)
	server   string        // "name/version" from the handshake
	proto    string
	unlisten func() // ends the subscriptions/listen stream (modern HTTP)
}

// dial starts (stdio) or reaches (HTTP) the upstream and does the MCP
// handshake. Over stdio the legacy initialize handshake is used on
// purpose: every server speaks it, and it keeps tools/list_changed on the
// open stream. Over HTTP the client negotiates: a 2026-07-28 server sends
// tools/list_changed on a subscriptions/listen stream, opened here; an
// older one is re-listed every poll interval and after a failed call.
func dial(ctx context.Context, spec host.UpstreamSpec, log *slog.Logger) (*conn, error) {
	c := &conn{changed: make(chan struct{}, 1), dead: make(chan struct{})}
	var tr transport.Interface
	if spec.URL != "" {
		headers := map[string]string{}
		if spec.BearerToken != "" {
			headers["Authorization"] = "Bearer " + spec.BearerToken
		}
		bt, err := newBoundedTransport(spec, refuseDeep(log, spec.Name))
		if err != nil {
			return nil, err
		}
		h, err := transport.NewStreamableHTTP(bt.shown.String(),
			transport.WithHTTPHeaders(headers), transport.WithHTTPBasicClient(&http.Client{Transport: bt}), transport.WithHTTPLogger(slog.New(quiet{log.Handler()})))
		if err != nil {
			return nil, err
		}
		tr = h
	} else {
		p, stdout, stdin, err := startProc(spec, log)
		if err != nil {
			return nil, err
		}
		c.proc, c.dead = p, p.exited
		tr = transport.NewIO(jsonbound.Lines(stdout, refuseDeep(log, spec.Name)), stdin, nil)
	}
	var copts []client.ClientOption
	if spec.URL == "" {
		copts = append(copts, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	c.client = client.NewClient(tr, copts...)
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == mcp.MethodNotificationToolsListChanged {
			select {
			case c.changed <- struct{}{}:
			default:
			}
		}
	})
	// The transport keeps Start's context for the session's lifetime (the
	// HTTP notification stream ends with it), so it must outlive dial's.
	if err := c.client.Start(context.WithoutCancel(ctx)); err != nil {
		c.close()
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "ordo", Version: clientVersion}
	res, err := c.client.Initialize(ctx, req)
	if err != nil {
		err = c.exitReason(err)
		c.close()
		return nil, err
	}
	c.server = res.ServerInfo.Name + "/" + res.ServerInfo.Version
	c.proto = res.ProtocolVersion
	if mcp.IsModernProtocol(c.client.ProtocolVersion()) {
		c.unlisten, err = c.client.ListenAsync(context.WithoutCancel(ctx), mcp.SubscriptionFilter{ToolsListChanged: true},
			func(err error) { log.Debug("upstream notification stream ended", "upstream", spec.Name, "err", err) })
		if err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

// list reads the whole tool list.
func (c *conn) list(ctx context.Context) ([]mcp.Tool, error) {
	res, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, c.exitReason(err)
	}
	return res.Tools, nil
}

// exitReason prefers "the process exited" (with its last stderr) over the
// transport error a dying process causes.
func (c *conn) exitReason(err error) error {
	if c.proc == nil {
		return err
	}
	select {
	case <-c.dead:
		return c.proc.exitErr()
	case <-time.After(50 * time.Millisecond):
		return err
	}
}

func (c *conn) pid() int {
	if c.proc == nil || c.proc.cmd.Process == nil {
		return 0
	}
	return c.proc.cmd.Process.Pid
}

// close ends the session; a process gets stdin closed, then SIGTERM, then
// SIGKILL for its whole group.
func (c *conn) close() {
	if c.unlisten != nil {
		c.unlisten()
	}
	if c.client != nil {
		_ = c.client.Close()
	}
	if c.proc != nil {
		c.proc.stop()
	}
}

// proc is a stdio upstream process. Ordo owns its pipes and its Wait, so an
// exit is seen at once (dead) and nothing is left behind.
type proc struct {
	cmd    *exec.Cmd
	stdout *os.File // our read end
	tail   *tail
	exited chan struct{}
	err    error // valid once exited is closed
}

// Upstream processes get these variables of Ordo's environment, and no
// others, plus their UpstreamSpec.Env.
var passEnv = []string{"PATH", "HOME", "TMPDIR", "LANG", "TZ"}

func startProc(spec host.UpstreamSpec, log *slog.Logger) (*proc, *os.File, *os.File, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, nil, err
	}
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		cmd.Env = append(cmd.Env, k+"="+spec.Env[k])
	}
	p := &proc{cmd: cmd, stdout: outR, tail: &tail{log: log, hide: contracts.ConcealEnv(spec.Env)}, exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.tail
	cmd.WaitDelay = time.Second // a grandchild holding stderr must not block Wait
	isolate(cmd)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, outR, inW, nil
}

func (p *proc) exitErr() error {
	msg := "upstream process exited"
	if p.err != nil {
		msg += ": " + p.err.Error()
	}
	if t := p.tail.String(); t != "" {
		msg += "; stderr: " + t
	}
	return errors.New(msg)
}

func (p *proc) stop() {
	exited := func(d time.Duration) bool {
		select {
		case <-p.exited:
			return true
		case <-time.After(d):
			return false
		}
	}
	if !exited(2 * time.Second) {
		signalGroup(p.cmd, syscall.SIGTERM)
		if !exited(2 * time.Second) {
			signalGroup(p.cmd, syscall.SIGKILL)
			exited(5 * time.Second)
		}
	}
	signalGroup(p.cmd, syscall.SIGKILL) // whatever the leader left in its group
	p.stdout.Close()
}

// tail logs an upstream's stderr line by line (at debug) and keeps the
// last bytes for the error that reports its exit, with the values of the
// upstream's configured env hidden: a server that fails saying "invalid
// key sk-…" would put its key in Ordo's log, status and errors. A line is
// hidden whole, however many writes it came in; one longer than lineMax
// is logged in pieces cut where no value straddles them (Concealer.Cut).
type tail struct {
	log  *slog.Logger
	hide contracts.Concealer
	mu   sync.Mutex
	line []byte // the end of the stream, not shown yet
	buf  []byte // the last tailSize bytes shown
}

const (
	tailSize = 1024
	lineMax  = 64 << 10 // as go-plugin reads a plugin's stderr
)

// Write looks for line ends in b alone: a line written a byte at a time
// costs its length, not its length squared.
func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(b)
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.line = append(t.line, b...)
			break
		}
		t.line = append(t.line, b[:i]...)
		t.show(t.hide.Text(string(t.line)) + "\n")
		t.line, b = t.line[:0], b[i+1:]
	}
	if len(t.line) > lineMax {
		shown, held := t.hide.Cut(string(t.line))
		t.show(shown)
		t.line = append(t.line[:0], held...)
	}
	return n, nil
}

// show logs text, concealed, and keeps its end in the tail.
func (t *tail) show(text string) {
	if line := strings.TrimRight(text, "\n"); line != "" {
		t.log.Debug("upstream stderr", "line", line)
	}
	t.buf = append(t.buf, text...)
	if len(t.buf) > tailSize {
		t.buf = t.buf[len(t.buf)-tailSize:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf) + t.hide.Text(string(t.line))
	return strings.TrimSpace(s[max(len(s)-tailSize, 0):])
}

// quiet lowers mcp-go's transport logs to debug: its listener logs an
// error every second while an HTTP upstream is down, which the source
// already reports once.
type quiet struct{ h slog.Handler }

func (q quiet) Enabled(ctx context.Context, _ slog.Level) bool {
	return q.h.Enabled(ctx, slog.LevelDebug)
}

func (q quiet) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return q.h.Handle(ctx, r)
}

func (q quiet) WithAttrs(a []slog.Attr) slog.Handler { return quiet{q.h.WithAttrs(a)} }
func (q quiet) WithGroup(n string) slog.Handler      { return quiet{q.h.WithGroup(n)} }
