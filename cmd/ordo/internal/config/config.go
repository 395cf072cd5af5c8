package config

import (
	"time"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
)

// StoreEmbedded selects the single-file store under the data directory.
const StoreEmbedded = "embedded"

// Config is the whole configuration. The yaml tags are the file's keys;
// Default holds every default.
type Config struct {
	// DataDir holds the run store, plugin data, the tool index and the
	// plugins directory unless those are set elsewhere.
	DataDir string `yaml:"data_dir"`
	// Store is "embedded" or a Postgres DSN (postgres://... or postgresql://...).
	Store        string                 `yaml:"store"`
	LLM          LLM                    `yaml:"llm"`
	HITL         contracts.HITLSwitches `yaml:"hitl"`
	Policy       Policy                 `yaml:"policy"`
	Parallelism  int                    `yaml:"parallelism"`
	ReplanBudget int                    `yaml:"replan_budget"`
	CandidatesK  int                    `yaml:"candidates_k"`
	// AllToolsMax: a catalog of at most this many usable tools goes to the
	// planner whole (no ranking can miss a tool, in any language); 0
	// always ranks.
	AllToolsMax int `yaml:"all_tools_max"`
	// PromptStateBytes bounds the run state one prompt shows a model (the
	// re-planner, the composer, the payload filler): larger values are cut
	// and marked.
	PromptStateBytes int `yaml:"prompt_state_bytes"`
	// OnFailure is what an action that still fails after its retries
	// does: replan, ask (the person decides) or fail; empty is replan
	// with a model and ask without one.
	OnFailure string `yaml:"on_failure"`
	// Timezone (IANA) and Locale (a BCP 47 tag) are the user's unless a
	// run's options say otherwise: the models resolve dates in the one
	// and word answers in the other.
	Timezone string `yaml:"timezone"`
	Locale   string `yaml:"locale"`
	// LeaseTTL is how long a run's lease outlives its driver's last
	// renewal: another server continues a dead server's run about this
	// long (plus half of it, how often servers look) after it died.
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// PluginsDir is watched: an executable dropped in becomes a plugin.
	PluginsDir string   `yaml:"plugins_dir"`
	Plugins    []Plugin `yaml:"plugins"`
	// Upstreams are MCP servers whose tools join the catalog as NAME.tool.
	Upstreams []Upstream `yaml:"upstreams"`
	Bundled   Bundled    `yaml:"bundled"`
	HTTP      HTTP       `yaml:"http"`
	MCP       MCP        `yaml:"mcp"`
	// ExposeTools makes `ordo serve` a policy-gated tool gateway: every
	// catalog tool is also published as an MCP tool (and call_tool), each
	// call judged by policy, validated and recorded like a one-step run.
	ExposeTools bool      `yaml:"expose_tools"`
	Log         Log       `yaml:"log"`
	Metrics     Metrics   `yaml:"metrics"`
	Retention   Retention `yaml:"retention"`
	Memory      Memory    `yaml:"memory"`
	// Budgets limit what each run, and each user's runs in a UTC day, may
	// spend: model calls, tokens, cost (llm.prices), steps, wall time.
	Budgets contracts.Budgets `yaml:"budgets"`
	// Verifier is how each step's result is checked: by code, or also by
	// a critic model.
	Verifier Verifier `yaml:"verifier"`
	// Recommender chooses the tool index's embedder: lexical, semantic
	// (offline, the default) or openai.
	Recommender Recommender `yaml:"recommender"`
	// PromptsDir holds NAME.md files (planner.md, verifier.md, ...) that
	// replace the built-in prompts one by one; any other file is refused.
	PromptsDir string `yaml:"prompts_dir"`
	// PluginHost tunes tool calls and plugin restarts (host.go).
	PluginHost PluginHost `yaml:"plugin_host"`
	// Postgres tunes a Postgres store (host.go).
	Postgres Postgres `yaml:"postgres"`
}

// Verifier configures result verification (agent.VerifierConfig). In llm
// mode a critic scores each result that passed the code checks; below
// Threshold the step is retried with the critic's feedback, up to
// MaxIterations attempts, or the critic asks the person.
type Verifier struct {
	Mode          string   `yaml:"mode"` // code | llm
	Threshold     float64  `yaml:"threshold"`
	MaxIterations int      `yaml:"max_iterations"`
	Tools         []string `yaml:"tools"` // tools the critic judges; empty: all
}

// LLM configures the OpenAI-compatible endpoint used for planning. The key
// itself is never in the file: APIKeyEnv names the variable that holds it.
type LLM struct {
	BaseURL           string        `yaml:"base_url"`
	Model             string        `yaml:"model"`
	APIKeyEnv         string        `yaml:"api_key_env"`
	Timeout           time.Duration `yaml:"timeout"`
	MaxRetries        int           `yaml:"max_retries"`
	StructuredOutputs bool          `yaml:"structured_outputs"`
	// Prices are what each model's tokens cost, in USD per million, by
	// model name: the cost of a run and of budgets.*.cost_usd.
	Prices map[string]llm.Price `yaml:"prices"`
}

// Policy is the tenant's rules and the scopes users hold.
type Policy struct {
	Tenant Tenant `yaml:"tenant"`
	// DefaultScopes are granted to a user with no entry in Users, including
	// the local user of `ordo run`. "*" grants every scope.
	DefaultScopes []string `yaml:"default_scopes"`
	// Users maps a user id to the scopes it holds.
	Users map[string][]string `yaml:"users"`
	// DenyTools and ConfirmTools name tools exactly or by a prefix ending
	// in "." ("chat." matches every chat tool).
	DenyTools    []string `yaml:"deny_tools"`
	ConfirmTools []string `yaml:"confirm_tools"`
}

// Tenant rules override the per-tool defaults of policy.
type Tenant struct {
	AllowDestructive  bool `yaml:"allow_destructive"`
	AllowExternalSend bool `yaml:"allow_external_send"`
}

// Plugin is a plugin declared in the file. SHA256 is required: Ordo
// refuses to start a declared binary it cannot verify.
type Plugin struct {
	Name   string            `yaml:"name"`
	Path   string            `yaml:"path"`
	SHA256 string            `yaml:"sha256"`
	Args   []string          `yaml:"args"`
	Env    map[string]string `yaml:"env"`
}

// Upstream is an MCP server reached over stdio (Command) or streamable
// HTTP (URL). Its bearer token comes from the variable BearerTokenEnv
// names, and a key its URL carries (where the URL says {secret}) from the
// one URLSecretEnv names, never from the file.
type Upstream struct {
	Name           string                       `yaml:"name"`
	Command        []string                     `yaml:"command,omitempty"`
	Env            map[string]string            `yaml:"env,omitempty"`
	URL            string                       `yaml:"url,omitempty"`
	BearerTokenEnv string                       `yaml:"bearer_token_env,omitempty"`
	URLSecretEnv   string                       `yaml:"url_secret_env,omitempty"`
	PollInterval   time.Duration                `yaml:"poll_interval,omitempty"`
	Overrides      map[string]host.ToolOverride `yaml:"overrides,omitempty"`
}

// Spec is the host's declaration of the upstream, with its token read
// from env.
func (u Upstream) Spec(env Env) host.UpstreamSpec {
	s := host.UpstreamSpec{Name: u.Name, Command: u.Command, Env: u.Env, URL: u.URL,
		PollInterval: u.PollInterval, Overrides: u.Overrides}
	if u.BearerTokenEnv != "" {
		s.BearerToken, _ = env(u.BearerTokenEnv)
	}
	if u.URLSecretEnv != "" {
		s.URLSecret, _ = env(u.URLSecretEnv)
	}
	return s
}

// Bundled switches the plugins shipped with Ordo on and off. Their binaries
// are looked up next to the ordo binary, then in ./bin.
type Bundled struct {
	Enabled bool         `yaml:"enabled"`
	Files   FilesPlugin  `yaml:"files"`
	Sheets  RootedPlugin `yaml:"sheets"`
	Notes   NotesPlugin  `yaml:"notes"`
	Text    Switch       `yaml:"text"`
	Chat    ChatPlugin   `yaml:"chat"`
}

// Switch turns one bundled plugin on or off.
type Switch struct {
	Enabled bool `yaml:"enabled"`
}

// RootedPlugin is a bundled plugin confined to one directory.
type RootedPlugin struct {
	Enabled bool   `yaml:"enabled"`
	Root    string `yaml:"root"`
	// AllowHardLinks lets the tools read a file that has other hard
	// links, whose other names may be outside the root.
	AllowHardLinks bool `yaml:"allow_hardlinks"`
}

// FilesPlugin is the files plugin: a RootedPlugin that writes, so its root
// has a size limit (MaxBytes, 0 for none).
type FilesPlugin struct {
	Enabled        bool   `yaml:"enabled"`
	Root           string `yaml:"root"`
	AllowHardLinks bool   `yaml:"allow_hardlinks"`
	MaxBytes       int64  `yaml:"max_bytes"`
}

// NotesPlugin is the notes plugin; MaxBytes bounds its store (0: none).
type NotesPlugin struct {
	Enabled  bool  `yaml:"enabled"`
	MaxBytes int64 `yaml:"max_bytes"`
}

// ChatPlugin posts to an outbox file, or to WebhookURL when set.
type ChatPlugin struct {
	Enabled bool `yaml:"enabled"`
	// WebhookURL is a Slack-compatible incoming webhook. It is a secret
	// (whoever has it can post) and is never logged.
	WebhookURL string `yaml:"webhook_url"`
	// Channels, when set, are the only channels posts may go to; unset,
	// the plugin opens at most 100.
	Channels []string `yaml:"channels"`
	// MaxBytes bounds the channel logs together (0: no limit).
	MaxBytes int64 `yaml:"max_bytes"`
}

// HTTP configures `ordo serve --http`.
type HTTP struct {
	Listen string  `yaml:"listen"`
	Tokens []Token `yaml:"tokens"`
	// ReadTimeout bounds reading one request, headers and body, so a
	// client that sends its body a byte at a time cannot hold a
	// connection (streams that answer after it are not bounded).
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// IdleTimeout closes a kept-alive connection with no request.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
}

// Token is one bearer token and the role it grants. Give the token itself
// (Token) or, better, the name of an environment variable holding it.
type Token struct {
	Name     string `yaml:"name"` // the user id the token authenticates
	Token    string `yaml:"token"`
	TokenEnv string `yaml:"token_env"`
	Role     string `yaml:"role"` // user | admin
}

// MCP configures what `ordo serve` lets MCP clients do.
type MCP struct {
	// StdioAdmin offers the admin tools (add_plugin, add_upstream,
	// remove_plugin, list_plugins) to the stdio client. Off by default:
	// whoever steers that client (an assistant a web page or a file can
	// prompt-inject) could otherwise make Ordo start any program. When on,
	// each add_plugin and add_upstream still asks the person (elicitation).
	StdioAdmin bool `yaml:"stdio_admin"`
	// MaxTasksPerUser bounds the MCP tasks one user (one token, or the
	// stdio client) has running: past it a task call is refused (3007).
	MaxTasksPerUser int `yaml:"max_tasks_per_user"`
}

// Metrics configures where `ordo serve` also serves /metrics and /readyz.
type Metrics struct {
	// Listen is a host:port of its own for them ("" for none): the only
	// way to scrape `ordo serve` over stdio, and a way to keep them off
	// the MCP listener's network. `serve --http` serves them there too.
	Listen string `yaml:"listen"`
}

// Log configures log/slog output on stderr.
type Log struct {
	// Level is debug, info, warn or error; unset means info for `ordo
	// serve` and warn for the one-shot commands, whose output is for people.
	Level  string `yaml:"level"`
	Format string `yaml:"format"` // text | json | auto (text on a terminal)
}

// Retention bounds how long finished runs are kept.
type Retention struct {
	// Runs is the age after which finished runs are pruned (by `ordo runs
	// prune` and daily by `ordo serve`); 0 keeps them forever.
	Runs time.Duration `yaml:"runs"`
}

// Memory switches pattern memory: what Ordo learns from finished runs
// (kept per user under <data_dir>/patterns) and what it uses that for.
type Memory struct {
	// Enabled collects every finished run, in the background.
	Enabled bool `yaml:"enabled"`
	// Examples is how many past plans for similar goals the planner sees.
	Examples int `yaml:"examples"`
	// ToolAdvice boosts tools that worked for similar goals and drops ones
	// that keep failing from the planner's candidates.
	ToolAdvice bool `yaml:"tool_advice"`
	// Clarification reuses trusted past answers to the planner's questions
	// and offers the others as suggestions.
	Clarification bool `yaml:"clarification"`
	// AutoApprove lets memory approve a step that step approval would stop
	// at, when the person nearly always accepts it; never a policy
	// confirmation.
	AutoApprove bool `yaml:"auto_approve"`
}

// Roles a token may grant.
const (
	RoleUser  = "user"
	RoleAdmin = "admin"
)

// Default returns the configuration used when no file sets a key. Paths
// derived from the data directory (plugins_dir, bundled.files.root) are
// filled in by Load once the data directory is known.
func Default() *Config {
	return &Config{
		Store: StoreEmbedded,
		LLM: LLM{
			Model:             "gpt-4.1-mini",
			APIKeyEnv:         "OPENAI_API_KEY",
			Timeout:           60 * time.Second,
			MaxRetries:        2,
			StructuredOutputs: true,
		},
		HITL: agent.DefaultConfig().HITL,
		Policy: Policy{
			Tenant:        Tenant{AllowDestructive: true, AllowExternalSend: true},
			DefaultScopes: []string{"*"},
			ConfirmTools:  []string{"chat."},
		},
		Parallelism:      4,
		ReplanBudget:     3,
		CandidatesK:      8,
		AllToolsMax:      40,    // agent.AllToolsBound
		PromptStateBytes: 65536, // agent.DefaultPromptStateBytes
		Timezone:         "UTC",
		LeaseTTL:         30 * time.Second, // agent.DefaultLeaseTTL
		Bundled: Bundled{
			Enabled: true,
			// The size limits are the plugins' own defaults (plugins/*/config.go).
			Files:  FilesPlugin{Enabled: true, MaxBytes: 1 << 30},
			Sheets: RootedPlugin{Enabled: true},
			Notes:  NotesPlugin{Enabled: true, MaxBytes: 64 << 20},
			Text:   Switch{Enabled: true},
			Chat:   ChatPlugin{Enabled: true, MaxBytes: 64 << 20},
		},
		HTTP:      HTTP{Listen: "127.0.0.1:7411", ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute},
		MCP:       MCP{MaxTasksPerUser: 16}, // mcpserver.DefaultMaxTasksPerUser
		Log:       Log{Format: "auto"},
		Retention: Retention{Runs: 30 * 24 * time.Hour},
		Memory:    Memory{Enabled: true, Examples: 3, ToolAdvice: true, Clarification: true},
		Budgets:   contracts.Budgets{OnExceed: contracts.OnExceedFail},
		Verifier:  Verifier{Mode: "code", Threshold: 0.7, MaxIterations: 3},
		Recommender: Recommender{Embedder: EmbedderSemantic,
			OpenAI: RecommenderEndpoint{Model: "text-embedding-3-small", APIKeyEnv: "OPENAI_API_KEY"}},
		PluginHost: defaultPluginHost(),
		Postgres:   Postgres{AutoMigrate: true},
	}
}

// APIKey returns the LLM API key from the environment variable the
// configuration names ("" when unset). Never log it.
func (l LLM) APIKey(env func(string) (string, bool)) string {
	v, _ := env(l.APIKeyEnv)
	return v
}

// validateLeaseTTL: leases are renewed every third of the ttl, so shorter
// than a second would mostly be store writes.
func (c *Config) validateLeaseTTL() error {
	if c.LeaseTTL < time.Second {
		return invalid("lease_ttl", "a duration of at least 1s such as 30s, got %s", c.LeaseTTL)
	}
	return nil
}

// ScopesFor returns the scopes user holds under the policy.
func (p Policy) ScopesFor(user string) []string {
	if s, ok := p.Users[user]; ok {
		return s
	}
	return p.DefaultScopes
}
