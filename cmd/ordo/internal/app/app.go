package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/builtin"
	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/agent/llm/openai"
	"github.com/ordo-run/ordo/agent/policy"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/host/mcpsource"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/embedded"
	"github.com/ordo-run/ordo/memory/patterns"
	"github.com/ordo-run/ordo/plugins/chat"
	"github.com/ordo-run/ordo/plugins/files"
	"github.com/ordo-run/ordo/plugins/notes"
	"github.com/ordo-run/ordo/plugins/sheets"
	"github.com/ordo-run/ordo/plugins/text"
	"github.com/ordo-run/ordo/recommender"
	"github.com/ordo-run/ordo/recommender/embed/semantic"
	"github.com/ordo-run/ordo/telemetry"
)

// App is one assembled Ordo. Close stops its plugins and closes the store.
type App struct {
	Config      *config.Config
	Log         *slog.Logger
	Store       memory.Checkpointer
	Host        *host.Host
	Recommender *recommender.Recommender
	LLM         llm.LLM // nil: no model configured; only caller-supplied plans run
	Engine      *agent.Engine
	// Patterns is pattern memory (nil when memory.enabled is false); its
	// collector consolidates finished runs in the background.
	Patterns  *patterns.Memory
	collector *patterns.Collector
	// Metrics sees runs, steps, tool and model calls, checkpoints and MCP
	// requests (telemetry.go); engineStore is Store as the engine writes
	// through it, observed.
	Metrics     *telemetry.Metrics
	engineStore memory.Checkpointer
	stopTracing func(context.Context) error

	stopFollow context.CancelFunc
	followDone chan struct{}
	closeOnce  sync.Once
	// runEvents hears every engine event once an MCP server is built
	// (MCPServer), so its event streams wake at once on runs that no MCP
	// request drives (recovered by Watch, driven by the CLI's engine).
	runEvents atomic.Pointer[func(agent.Event)]
}

// Options tune the assembly for one subcommand.
type Options struct {
	// IndexDir persists the tool index ("" keeps it in memory). A
	// long-lived server persists it; one-shot commands need not.
	IndexDir string
	// Env looks up the LLM key and tokens (os.LookupEnv in production).
	Env config.Env
	// PluginStartGate, when set, holds back the processes of the plugins
	// listed from the contract cache until it is closed (host.WithStartGate):
	// a server answers its first requests first.
	PluginStartGate <-chan struct{}
}

// Open assembles everything cfg describes. A plugin that cannot start is
// logged and listed by Host.Plugins; it does not stop Ordo.
func Open(ctx context.Context, cfg *config.Config, log *slog.Logger, o Options) (*App, error) {
	if o.Env == nil {
		o.Env = os.LookupEnv
	}
	if cfg.Recommender.Embedder == config.EmbedderSemantic {
		// Parsing the built-in model takes milliseconds: done on another
		// core while the store and the host open (RecommenderOptions gets
		// the same parse, and its error).
		go func() { _, _ = semantic.NewStatic() }()
	}
	store, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if st, ok := store.(*embedded.Store); ok && st.Exposed() != nil {
		log.Warn("the run store is readable by other users; make it private (chmod 600)", "err", st.Exposed())
	}
	a := &App{Config: cfg, Log: log, Store: store}
	fail := func(err error) (*App, error) {
		a.Close()
		return nil, err
	}
	if err := a.startTelemetry(ctx, o.Env); err != nil {
		return fail(err)
	}
	if a.LLM, err = newLLM(cfg, o.Env); err != nil {
		return fail(err)
	}
	if a.LLM != nil {
		a.LLM = a.Metrics.LLM(a.LLM, cfg.LLM.Model)
	}
	if cfg.Bundled.Enabled && cfg.Bundled.Files.Enabled {
		if err := os.MkdirAll(cfg.Bundled.Files.Root, 0o700); err != nil {
			return fail(contracts.Errorf(contracts.CodeInvalidConfig, "files root: %w", err).With("key", "bundled.files.root"))
		}
	}
	// The plugins directory is loaded and watched by every command: a
	// plugin dropped in mid-run becomes available to re-plans too.
	a.Host, err = host.New(append(cfg.PluginHost.HostOptions(),
		host.WithLogger(log.With("component", "host")),
		host.WithDataDir(cfg.DataDir),
		host.WithPlugins(PluginSpecs(cfg, log)...),
		host.WithPluginsDir(cfg.PluginsDir),
		host.WithUpstreamOpener(mcpsource.Open),
		host.WithUpstreams(upstreamSpecs(cfg, o.Env, log)...),
		host.WithMiddleware(a.Metrics.ToolCalls()),
		host.WithStartGate(o.PluginStartGate),
		host.WithReservedNames(llmProvider), // added below: no plugin in plugins_dir may take it first
	)...)
	if err != nil {
		return fail(err)
	}
	a.Metrics.Watch(a.Store, a.Host)
	if a.LLM != nil {
		prov, err := host.InProcess(builtin.Tools(a.LLM, nil)...)
		if err != nil {
			return fail(err)
		}
		if err := a.Host.AddProvider(ctx, llmProvider, "builtin", prov); err != nil {
			return fail(err)
		}
	}
	if o.IndexDir != "" {
		if err := os.MkdirAll(o.IndexDir, 0o700); err != nil {
			return fail(contracts.Errorf(contracts.CodeInvalidConfig, "tool index dir: %w", err).With("key", "data_dir"))
		}
	}
	ropts, err := RecommenderOptions(cfg, o.Env)
	if err != nil {
		return fail(err)
	}
	ropts.Dir, ropts.Logger = o.IndexDir, log.With("component", "recommender")
	if a.Recommender, err = recommender.New(ropts); err != nil {
		return fail(err)
	}
	if err := a.follow(ctx); err != nil {
		return fail(err)
	}
	if cfg.Memory.Enabled {
		if a.Patterns, err = OpenPatterns(cfg, log); err != nil {
			return fail(err)
		}
		a.collector = patterns.NewCollector(a.Patterns, patterns.CollectorOptions{Logger: log.With("component", "patterns")})
	}
	a.Engine = agent.New(EngineConfig(cfg), a.deps(a.LLM))
	return a, nil
}

// deps are the engine's collaborators, with model m. Progress events are
// subscribed per call (agent.WithEvents); every event also reaches the MCP
// server's event streams (runEvents).
func (a *App) deps(m llm.LLM) agent.Deps {
	d := agent.Deps{
		Events: func(ev agent.Event) {
			a.Metrics.Event(ev)
			if f := a.runEvents.Load(); f != nil {
				(*f)(ev)
			}
		},
		Tools:       a.Host,
		LLM:         m,
		Store:       a.engineStore,
		Requests:    requester(a.Store),
		Recommender: a.Recommender,
		Logger:      a.Log.With("component", "engine"),
		Scopes:      a.ScopesFor, // as scoped gives each run at its start
	}
	if a.Patterns != nil { // a nil *patterns.Memory would be a non-nil PatternMemory
		d.Memory, d.Collector = a.Patterns, a.collector
	}
	return d
}

// OpenStore opens the configured run store, creating the data directory
// (and, for Postgres, applying migrations).
func OpenStore(ctx context.Context, cfg *config.Config) (memory.Checkpointer, error) {
	if cfg.IsPostgres() {
		return openPostgres(ctx, cfg)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "data dir: %w", err).With("key", "data_dir")
	}
	st, err := embedded.Open(cfg.DatabasePath())
	if err != nil {
		return nil, err
	}
	return st, nil
}

// EngineConfig maps the configuration onto the engine's.
func EngineConfig(cfg *config.Config) agent.Config {
	return agent.Config{
		Parallelism:      cfg.Parallelism,
		ReplanBudget:     replanBudget(cfg.ReplanBudget),
		OnFailure:        cfg.OnFailure,
		CandidatesK:      cfg.CandidatesK,
		AllToolsMax:      allToolsMax(cfg.AllToolsMax),
		PromptStateBytes: cfg.PromptStateBytes,
		Timezone:         cfg.Timezone,
		Locale:           cfg.Locale,
		LeaseTTL:         cfg.LeaseTTL,
		HITL:             cfg.HITL,
		Policy: policy.Config{
			DenyDestructive:  !cfg.Policy.Tenant.AllowDestructive,
			DenyExternalSend: !cfg.Policy.Tenant.AllowExternalSend,
			DenyTools:        cfg.Policy.DenyTools,
			ConfirmTools:     cfg.Policy.ConfirmTools,
		},
		Memory:  memoryConfig(cfg.Memory),
		Budgets: cfg.Budgets,
		Prices:  cfg.LLM.Prices,
		Verifier: agent.VerifierConfig{Mode: cfg.Verifier.Mode, Threshold: cfg.Verifier.Threshold,
			MaxIterations: cfg.Verifier.MaxIterations, Tools: cfg.Verifier.Tools},
		Prompts: promptsDir(cfg.PromptsDir),
	}
}

// promptsDir is the prompt override directory (nil: the built-in prompts).
func promptsDir(dir string) fs.FS {
	if dir == "" {
		return nil
	}
	return os.DirFS(dir)
}

// memoryConfig: with collection off, no use of memory is on either.
func memoryConfig(m config.Memory) agent.MemoryConfig {
	if !m.Enabled {
		return agent.MemoryConfig{}
	}
	return agent.MemoryConfig{Collect: true, Examples: m.Examples, ToolAdvice: m.ToolAdvice,
		Clarification: m.Clarification, AutoApprove: m.AutoApprove}
}

// replanBudget maps "0 re-plans" onto the engine's spelling (< 0 means
// none; 0 means its default).
func replanBudget(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func newLLM(cfg *config.Config, env config.Env) (llm.LLM, error) {
	key := cfg.LLM.APIKey(env)
	if cfg.LLM.BaseURL == "" && key == "" {
		return nil, nil
	}
	c, err := openai.New(openai.Config{
		BaseURL:          cfg.LLM.BaseURL,
		APIKey:           key,
		Model:            cfg.LLM.Model,
		Timeout:          cfg.LLM.Timeout,
		MaxRetries:       &cfg.LLM.MaxRetries, // 0 is "no retries"; the config defaults it to 2
		StructuredOutput: cfg.LLM.StructuredOutputs,
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// follow keeps the recommender's index in step with the catalog: a
// synchronous pass over today's tools (so the first plan sees them all),
// then the host's change events.
func (a *App) follow(ctx context.Context) error {
	var offers []recommender.Offer
	for _, t := range a.Host.List() {
		offers = append(offers, recommender.Offer{Contract: t.Contract, Hash: t.Hash()})
	}
	if err := a.Recommender.UpsertOffers(ctx, offers...); err != nil {
		return err
	}
	fctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	a.stopFollow, a.followDone = stop, make(chan struct{})
	events := a.Host.Subscribe(fctx)
	go func() {
		defer close(a.followDone)
		a.indexEvents(fctx, events)
	}()
	return nil
}

// ScopesFor is the scopes policy grants user.
func (a *App) ScopesFor(user string) []string { return a.Config.Policy.ScopesFor(user) }

// Close stops following the catalog, closes the tool index, stops every
// plugin and closes the store. It is safe to call more than once.
func (a *App) Close() error {
	var errs []error
	a.closeOnce.Do(func() {
		if a.stopFollow != nil {
			a.stopFollow()
			<-a.followDone
		}
		if a.Recommender != nil {
			errs = append(errs, a.Recommender.Close())
		}
		if a.collector != nil { // learn from the runs just finished before exiting
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			errs = append(errs, a.collector.Close(ctx))
			cancel()
		}
		if a.Host != nil {
			errs = append(errs, a.Host.Close())
		}
		if a.Store != nil {
			errs = append(errs, a.Store.Close())
		}
		if a.stopTracing != nil { // send the spans still batched
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			errs = append(errs, a.stopTracing(ctx))
			cancel()
		}
	})
	return errors.Join(errs...)
}

// llmProvider is the source of Ordo's built-in llm.* tools.
const llmProvider = "llm"

// BundledNames are the plugins shipped with Ordo, in start order.
var BundledNames = []string{"files", "notes", "sheets", "text", "chat"}

// PluginSpecs lists the plugins to start: the enabled bundled plugins whose
// binaries are found, then the declared ones.
func PluginSpecs(cfg *config.Config, log *slog.Logger) []host.PluginSpec {
	var specs []host.PluginSpec
	if cfg.Bundled.Enabled {
		for _, name := range BundledNames {
			env, on := bundledEnv(cfg, name)
			if !on {
				continue
			}
			path, err := FindBundled(name)
			if err != nil {
				log.Warn("bundled plugin not found; its tools are unavailable", "plugin", name, "err", err)
				continue
			}
			// Shipped beside ordo, so trusted as found: the host pins what
			// is there when it starts it (hashing it once, not here too),
			// and lists its tools meanwhile.
			specs = append(specs, host.PluginSpec{Name: name, Path: path, PinFound: true, Env: env, Contracts: bundledContracts(name, env)})
		}
	}
	for _, p := range cfg.Plugins {
		specs = append(specs, host.PluginSpec{Name: p.Name, Path: p.Path, SHA256: p.SHA256, Env: p.Env, Args: p.Args})
	}
	return specs
}

// upstreamSpecs declares the configured upstream MCP servers, tokens read
// from the environment.
func upstreamSpecs(cfg *config.Config, env config.Env, log *slog.Logger) []host.UpstreamSpec {
	var specs []host.UpstreamSpec
	for _, u := range cfg.Upstreams {
		specs = append(specs, upstreamSpec(u, env, log))
	}
	return specs
}

// upstreamSpec is u's host declaration, its token read from env.
func upstreamSpec(u config.Upstream, env config.Env, log *slog.Logger) host.UpstreamSpec {
	s := u.Spec(env)
	if u.BearerTokenEnv != "" && s.BearerToken == "" {
		log.Warn("upstream token variable is unset; connecting without a token", "upstream", u.Name, "variable", u.BearerTokenEnv)
	}
	if u.URLSecretEnv != "" && s.URLSecret == "" {
		log.Warn("upstream URL secret variable is unset; the upstream is refused", "upstream", u.Name, "variable", u.URLSecretEnv)
	}
	return s
}

// bundledEnv is one bundled plugin's environment and whether it is on.
func bundledEnv(cfg *config.Config, name string) (map[string]string, bool) {
	b := cfg.Bundled
	size := func(n int64) string { return strconv.FormatInt(n, 10) }
	switch name {
	case "files":
		return map[string]string{"ORDO_FILES_ROOT": b.Files.Root, "ORDO_FILES_MAX_BYTES": size(b.Files.MaxBytes),
			"ORDO_FILES_ALLOW_HARDLINKS": strconv.FormatBool(b.Files.AllowHardLinks)}, b.Files.Enabled
	case "sheets":
		return map[string]string{"ORDO_SHEETS_ROOT": b.Sheets.Root, "ORDO_SHEETS_ALLOW_HARDLINKS": strconv.FormatBool(b.Sheets.AllowHardLinks)}, b.Sheets.Enabled
	case "notes":
		return map[string]string{"ORDO_NOTES_MAX_BYTES": size(b.Notes.MaxBytes)}, b.Notes.Enabled
	case "text":
		return nil, b.Text.Enabled
	case "chat":
		env := map[string]string{"ORDO_CHAT_MAX_BYTES": size(b.Chat.MaxBytes), "ORDO_CHAT_CHANNELS": strings.Join(b.Chat.Channels, ",")}
		if b.Chat.WebhookURL != "" {
			env["ORDO_CHAT_WEBHOOK_URL"] = b.Chat.WebhookURL
		}
		return env, b.Chat.Enabled
	}
	return nil, false
}

// bundledContracts are what bundled plugin name describes with env, known
// without running it: ordo and its plugins are built from one module. A
// binary from another build describes itself at its start, and that wins.
func bundledContracts(name string, env map[string]string) []contracts.Contract {
	switch name {
	case "files":
		return files.Contracts()
	case "sheets":
		return sheets.Contracts()
	case "notes":
		return notes.Contracts()
	case "text":
		return text.Contracts()
	case "chat":
		return chat.Contracts(chat.Config{WebhookURL: env[chat.WebhookEnv]})
	}
	return nil
}

// FindBundled finds ordo-plugin-NAME next to the running ordo binary, else
// in ./bin.
func FindBundled(name string) (string, error) {
	file := "ordo-plugin-" + name
	var tried []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		tried = append(tried, filepath.Join(filepath.Dir(exe), file))
	}
	if wd, err := os.Getwd(); err == nil {
		tried = append(tried, filepath.Join(wd, "bin", file))
	}
	for _, p := range tried {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("no executable %s in %v (run make build)", file, tried)
}

// OpenPatterns opens the pattern memory under the data directory, which
// holds every user's records (the CLI opens it alone to list and forget).
func OpenPatterns(cfg *config.Config, log *slog.Logger) (*patterns.Memory, error) {
	return patterns.Open(filepath.Join(cfg.DataDir, "patterns"), nil, patterns.Options{Logger: log.With("component", "patterns")})
}

// PluginDataDir is where the host keeps a plugin's data.
func PluginDataDir(cfg *config.Config, name string) string {
	return filepath.Join(cfg.DataDir, "plugins", name)
}

// Migrate brings the configured store's schema up to date and returns the
// migrations it applied (the embedded store migrates its file on open).
func Migrate(ctx context.Context, cfg *config.Config) ([]string, error) {
	if cfg.IsPostgres() {
		return migratePostgres(ctx, cfg)
	}
	st, err := OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return st.(*embedded.Store).Migrated(), st.Close()
}

// allToolsMax is the engine's all_tools_max: the file's 0 ("always rank")
// is the engine's -1, its 0 being "the default".
func allToolsMax(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
