package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ordo-run/ordo/contracts"
)

// Options configure a Server. Engine is required; every other dependency
// is optional and the tools that need a missing one are not offered.
type Options struct {
	// Engine runs plans; it plans with the configured model when HasLLM.
	Engine Engine
	// HasLLM says Engine has a model. Without one, Sampling (if set) lets
	// Engine plan with the calling client's model; with neither, plan and
	// execute accept only caller-supplied plans.
	HasLLM   bool
	Sampling SamplingModel
	Runs     RunLister   // list_runs
	Catalog  Catalog     // ordo://catalog
	Admin    SourceAdmin // add_plugin, add_upstream, remove_plugin, list_plugins
	// LookupEnv resolves add_upstream's bearer_token_env on the server
	// (default os.LookupEnv). The admin role may name any variable it sees.
	LookupEnv func(key string) (string, bool)
	// Gateway, when set, publishes catalog tools and call_tool (gateway.go).
	Gateway *Gateway
	// Tokens gate HTTP access; with none, every HTTP request is refused.
	Tokens []Token
	// StdioIdentity is who a stdio client is: the local user who started
	// the process. Default: user "local" without the admin role, since a
	// prompt-injected assistant on stdio must not start programs unasked.
	StdioIdentity *Identity
	Logger        *slog.Logger
	Version       string
	// SamplingTimeout bounds how long a run waits for the client to answer
	// one sampling request (default 2 minutes).
	SamplingTimeout time.Duration
	// MaxBodyBytes bounds an HTTP request body (default 4 MiB).
	MaxBodyBytes int64
	// MaxTasksPerUser bounds the MCP tasks one user has running; a task
	// call past it is refused with CodeTooManyTasks (default
	// DefaultMaxTasksPerUser).
	MaxTasksPerUser int
	// Observe are extra mcp-go options that watch every request
	// (telemetry.Metrics.MCPOptions: a span and a count per request).
	Observe []server.ServerOption
	// Public are more handlers served without a token beside /healthz,
	// by path (/metrics, /readyz).
	Public map[string]http.Handler
}

// Server is Ordo's MCP server.
type Server struct {
	opts   Options
	log    *slog.Logger
	mcp    *server.MCPServer
	tools  map[string]*toolDef
	jobs   *jobTable
	tasks  *tasks
	tokens *tokenTable
	owners *sessionOwners
	// inflight: the sessionless HTTP requests a caller may cancel.
	inflight *inflight
	gw       *gateway
	subs     *subscriptions

	// runWatch wakes the event streams (events.go) following a run;
	// closing ends them all (EndStreams).
	runWatch *runWatchers
	// streamWriteTimeout is how long an event stream waits for its
	// client to take a write (sseWriteTimeout; tests shorten it).
	streamWriteTimeout time.Duration
	// sessionIdleTTL is how long an HTTP session (protocol 2025-11-25
	// and older) may go unused before mcp-go drops it (sessionIdleTTL;
	// tests shorten it).
	sessionIdleTTL time.Duration
	closing        chan struct{}
	closeOnce      sync.Once
}

// New checks opts and builds the server with its tools and resources.
func New(opts Options) (*Server, error) {
	if opts.Engine == nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "mcpserver: an engine is required").With("field", "engine")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.SamplingTimeout <= 0 {
		opts.SamplingTimeout = 2 * time.Minute
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	if opts.MaxTasksPerUser <= 0 {
		opts.MaxTasksPerUser = DefaultMaxTasksPerUser
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	if opts.StdioIdentity == nil {
		opts.StdioIdentity = &Identity{User: "local"}
	}
	s := &Server{
		opts:               opts,
		log:                opts.Logger,
		jobs:               newJobTable(),
		tasks:              newTasks(opts.MaxTasksPerUser),
		tokens:             newTokenTable(opts.Tokens),
		owners:             newSessionOwners(),
		inflight:           newInflight(),
		runWatch:           newRunWatchers(),
		streamWriteTimeout: sseWriteTimeout,
		sessionIdleTTL:     sessionIdleTTL,
		closing:            make(chan struct{}),
	}
	s.subs = newSubscriptions(s)
	hooks := s.subs.hooks()
	hooks.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) { s.owners.drop(sess.SessionID()) })
	s.tasks.guard(hooks)
	s.mcp = server.NewMCPServer("ordo", opts.Version, append([]server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(false),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completer{s}),
		server.WithResourceCompletionProvider(completer{s}),
		server.WithHooks(hooks),
		server.WithTaskCapabilities(true, true, true),
		server.WithTaskHooks(s.tasks.hooks()),
		server.WithLogging(),
		server.WithRecovery(),
		server.WithToolFilter(s.filterTools),
		server.WithInstructions(instructions),
	}, opts.Observe...)...)
	if err := s.registerTools(); err != nil {
		return nil, err
	}
	s.registerResources()
	s.registerPrompts()
	if err := s.startGateway(); err != nil {
		return nil, err
	}
	return s, nil
}

const instructions = `Ordo plans and executes tool-using tasks. Call "plan" with a goal (or your own Action Plan, schema at ordo://schemas/action-plan), then "execute" with the run_id; if a run is interrupted, answer with "approve". "execute" also accepts a goal or plan directly.`

// MCP returns the underlying mcp-go server, for transports this package
// does not wrap.
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// stdioToolWorkers is how many stdio tool calls run at once.
const stdioToolWorkers = 100

// ServeStdio serves one client over in and out until ctx ends or in closes.
// The client acts as Options.StdioIdentity.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	id := *s.opts.StdioIdentity
	stdio := server.NewStdioServer(s.mcp)
	// mcp-go's default of 5 workers for tool calls made a sixth call
	// (the cancel_run that would settle the others) wait for one of five
	// long executes to end; 100 is mcp-go's most.
	server.WithWorkerPoolSize(stdioToolWorkers)(stdio)
	stdio.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelError))
	progress := newStdioProgress(out)
	stdio.SetContextFunc(func(ctx context.Context) context.Context {
		return context.WithValue(withIdentity(ctx, id), stdioProgressKey{}, progress)
	})
	in, out = s.boundStdio(in, progress)
	return stdio.Listen(ctx, in, out)
}

// sessionIdleTTL: an HTTP session unused this long is dropped, with its
// subscriptions. mcp-go kept every session an initialize opened until a
// DELETE (which mcp-go's own Go client sends without the bearer token, so
// it is refused): 5000 initializes grew ordo serve --http by 50 MB, for
// good. It is well under sessionOwnerTTL, so a session is always gone
// before its binding to its user is forgotten: an id whose binding was
// forgotten reaches nothing.
const sessionIdleTTL = 12 * time.Hour

// Handler serves streamable HTTP at /mcp and a run's events as
// Server-Sent Events at GET /runs/{id}/events (events.go), both behind
// bearer-token auth, and an unauthenticated /healthz (and Options.Public). mcp-go's
// DNS-rebinding protection stays on.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok", "version": s.opts.Version})
	})
	streamable := server.NewStreamableHTTPServer(s.mcp, server.WithStreamableHTTPLogger(s.log),
		server.WithSessionIdleTTL(s.sessionIdleTTL))
	go func() { <-s.closing; _ = streamable.Shutdown(context.Background()) }() // stops its session sweeper
	mux.Handle("/mcp", s.authenticate(streamable))
	mux.Handle(eventsPath, s.authenticate(http.HandlerFunc(s.serveEvents)))
	for path, h := range s.opts.Public {
		mux.Handle(path, h)
	}
	return mux
}

// filterTools hides the admin tools from callers without the admin role,
// and the gateway's catalog tools whose scopes the caller lacks.
func (s *Server) filterTools(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	admin := identityFrom(ctx).Has(RoleAdmin)
	out := tools[:0:0]
	for _, t := range tools {
		if d := s.tools[t.Name]; d != nil && d.admin && !admin {
			continue
		}
		if d := s.tools[t.Name]; d == nil && s.gw != nil && !s.gw.visibleName(ctx, t.Name) {
			continue
		}
		out = append(out, t)
	}
	return out
}
