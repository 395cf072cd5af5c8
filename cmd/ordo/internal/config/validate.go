package config

import (
	"fmt"
	"maps"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ordo-run/ordo/contracts"
)

var (
	envName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	pluginName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	sha256Hex  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// toolPattern is a tool name (service.name) or a prefix ending in ".".
	toolPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+\.([A-Za-z0-9_.-]*)$`)
)

// Validate checks every key and returns the first problem as a
// contracts.CodeInvalidConfig error naming the key.
func (c *Config) Validate() error {
	checks := []func() error{
		func() error { return absDir("data_dir", c.DataDir) },
		c.validateStore,
		c.validateLLM,
		func() error { return intRange("parallelism", c.Parallelism, 1, 256) },
		func() error { return intRange("replan_budget", c.ReplanBudget, 0, 20) },
		func() error {
			switch c.OnFailure {
			case "", contracts.OnFailureReplan, contracts.OnFailureAsk, contracts.OnFailureFail:
				return nil
			}
			return invalid("on_failure", "replan, ask or fail, got %q", c.OnFailure)
		},
		func() error { return intRange("candidates_k", c.CandidatesK, 1, 200) },
		func() error { return intRange("all_tools_max", c.AllToolsMax, 0, 1000) },
		func() error { return intRange("prompt_state_bytes", c.PromptStateBytes, 1024, 64<<20) },
		func() error {
			if _, err := time.LoadLocation(c.Timezone); err != nil || c.Timezone == "" || c.Timezone == "Local" {
				return invalid("timezone", "an IANA timezone such as UTC or Asia/Seoul, got %q", c.Timezone)
			}
			return nil
		},
		func() error {
			if c.Locale != "" && !localeTag.MatchString(c.Locale) {
				return invalid("locale", "a language tag such as en, en-US or ko-KR, got %q", c.Locale)
			}
			return nil
		},
		c.validateLeaseTTL,
		c.validatePolicy,
		func() error { return absDir("plugins_dir", c.PluginsDir) },
		c.validatePlugins,
		c.validateUpstreams,
		c.validateBundled,
		c.validateHTTP,
		func() error {
			if c.Metrics.Listen == "" {
				return nil
			}
			return ListenAddr("metrics.listen", c.Metrics.Listen)
		},
		c.validateLog,
		c.validatePrices,
		c.validateBudgets,
		func() error { return intRange("memory.examples", c.Memory.Examples, 0, 20) },
		func() error { return intRange("mcp.max_tasks_per_user", c.MCP.MaxTasksPerUser, 1, 10000) },
		c.validateVerifier,
		c.validateRecommender,
		c.validatePluginHost,
		func() error {
			if c.Retention.Runs < 0 {
				return invalid("retention.runs", "a duration >= 0 (0 keeps runs forever), got %s", c.Retention.Runs)
			}
			return nil
		},
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// IsPostgres reports whether the store is a Postgres DSN.
func (c *Config) IsPostgres() bool {
	return strings.HasPrefix(c.Store, "postgres://") || strings.HasPrefix(c.Store, "postgresql://")
}

// DatabasePath is the embedded store's file.
func (c *Config) DatabasePath() string { return filepath.Join(c.DataDir, "ordo.db") }

func (c *Config) validateStore() error {
	if c.Store == StoreEmbedded {
		return nil
	}
	if c.IsPostgres() {
		if _, err := url.Parse(c.Store); err == nil {
			return nil
		}
	}
	// The value may hold a password: never echo it.
	return invalid("store", `"embedded" or a Postgres URL (postgres://user@host/db)`)
}

// validateEndpoint checks the keys of an OpenAI-compatible endpoint under
// prefix (llm, recommender.openai): base_url, when set, an http or https
// URL without credentials, query or fragment; model, set (modelKind is what the error asks
// for); api_key_env, a variable's name.
func validateEndpoint(prefix, baseURL, model, keyEnv, modelKind string) error {
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid(prefix+".base_url", "an http or https URL such as http://localhost:11434/v1")
		}
		if u.User != nil {
			return invalid(prefix+".base_url", "a URL without credentials (put the key in the variable %s.api_key_env names)", prefix)
		}
		// openai-go resolves each call's path against the base URL, which
		// drops its query and fragment: a key or api-version there would
		// silently never be sent.
		if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
			return invalid(prefix+".base_url", "a URL without a query or fragment (the client does not send them; put a key in the variable %s.api_key_env names)", prefix)
		}
	}
	if strings.TrimSpace(model) == "" {
		return invalid(prefix+".model", "%s", modelKind)
	}
	if !envName.MatchString(keyEnv) {
		return invalid(prefix+".api_key_env", "the name of an environment variable (letters, digits, _), got %q", keyEnv)
	}
	return nil
}

func (c *Config) validateLLM() error {
	l := c.LLM
	if err := validateEndpoint("llm", l.BaseURL, l.Model, l.APIKeyEnv, "a model name such as gpt-4.1-mini"); err != nil {
		return err
	}
	if l.Timeout <= 0 {
		return invalid("llm.timeout", "a positive duration such as 60s, got %s", l.Timeout)
	}
	return intRange("llm.max_retries", l.MaxRetries, 0, 10)
}

func (c *Config) validatePolicy() error {
	if err := scopes("policy.default_scopes", c.Policy.DefaultScopes); err != nil {
		return err
	}
	for key, tools := range map[string][]string{"policy.deny_tools": c.Policy.DenyTools, "policy.confirm_tools": c.Policy.ConfirmTools} {
		for i, t := range tools {
			if !toolPattern.MatchString(t) {
				return invalid(fmt.Sprintf("%s[%d]", key, i), `a tool name such as chat.post_message or a prefix ending in "." such as chat., got %q`, t)
			}
		}
	}
	for user, s := range c.Policy.Users {
		if strings.TrimSpace(user) == "" {
			return invalid("policy.users", "non-empty user ids")
		}
		if err := scopes("policy.users."+user, s); err != nil {
			return err
		}
	}
	return nil
}

func scopes(key string, s []string) error {
	for i, v := range s {
		if v == "" || strings.ContainsAny(v, " \t\n") {
			return invalid(fmt.Sprintf("%s[%d]", key, i), "a scope without spaces such as notes:write, got %q", v)
		}
	}
	return nil
}

func (c *Config) validatePlugins() error {
	seen := map[string]bool{}
	for i, p := range c.Plugins {
		key := fmt.Sprintf("plugins[%d]", i)
		if !pluginName.MatchString(p.Name) {
			return invalid(key+".name", "a plugin name of lower-case letters, digits, - and _, got %q", p.Name)
		}
		if seen[p.Name] || bundledNames[p.Name] {
			return invalid(key+".name", "a name not used by another plugin, %q is taken", p.Name)
		}
		seen[p.Name] = true
		if p.Path == "" {
			return invalid(key+".path", "the plugin executable's path")
		}
		if !sha256Hex.MatchString(p.SHA256) {
			return invalid(key+".sha256", "the executable's SHA-256 as 64 lower-case hex digits (sha256sum FILE)")
		}
		for k := range p.Env {
			if !envName.MatchString(k) {
				return invalid(key+".env", "environment variable names (letters, digits, _), got %q", k)
			}
		}
	}
	return nil
}

func (c *Config) validateUpstreams() error {
	for i, u := range c.Upstreams {
		key := fmt.Sprintf("upstreams[%d]", i)
		taken := bundledNames[u.Name] || slices.ContainsFunc(c.Plugins, func(p Plugin) bool { return p.Name == u.Name }) ||
			slices.ContainsFunc(c.Upstreams[:i], func(o Upstream) bool { return o.Name == u.Name })
		if taken {
			return invalid(key+".name", "a name not used by another plugin or upstream, %q is taken", u.Name)
		}
		for _, v := range [][2]string{{"bearer_token_env", u.BearerTokenEnv}, {"url_secret_env", u.URLSecretEnv}} {
			if v[1] != "" && !envName.MatchString(v[1]) {
				return invalid(key+"."+v[0], "the name of an environment variable, got %q", v[1])
			}
		}
		// The host's own check, with stand-in secrets: it names the field.
		spec := u.Spec(func(string) (string, bool) { return "set-at-start", true })
		if err := spec.Check(); err != nil {
			ce := contracts.AsError(err)
			field, _ := ce.Details["field"].(string)
			if field == "bearer_token" || field == "url_secret" {
				field += "_env"
			}
			return contracts.Errorf(contracts.CodeInvalidConfig, "config key %s.%s: %s", key, field, ce.Message).
				With("key", key+"."+field)
		}
	}
	return nil
}

// bundledNames are the tool sources shipped with Ordo, its bundled plugins
// and its built-in llm tools; declared plugins and upstreams may not take
// their names.
var bundledNames = map[string]bool{"files": true, "sheets": true, "notes": true, "text": true, "chat": true, "llm": true}

// chatChannel is a channel name as chat.post_message takes it.
var chatChannel = regexp.MustCompile(`^#?[A-Za-z0-9][A-Za-z0-9._-]{0,79}$`)

func (c *Config) validateBundled() error {
	if err := absDir("bundled.files.root", c.Bundled.Files.Root); err != nil {
		return err
	}
	if err := absDir("bundled.sheets.root", c.Bundled.Sheets.Root); err != nil {
		return err
	}
	for _, max := range []struct {
		key string
		n   int64
	}{{"bundled.files.max_bytes", c.Bundled.Files.MaxBytes}, {"bundled.notes.max_bytes", c.Bundled.Notes.MaxBytes}, {"bundled.chat.max_bytes", c.Bundled.Chat.MaxBytes}} {
		if max.n < 0 {
			return invalid(max.key, "a size in bytes, 0 for no limit, got %d", max.n)
		}
	}
	for i, ch := range c.Bundled.Chat.Channels {
		if !chatChannel.MatchString(ch) {
			return invalid(fmt.Sprintf("bundled.chat.channels[%d]", i), "a channel name (letters, digits, '.', '_', '-', up to 80, an optional leading '#'), got %q", ch)
		}
	}
	if w := c.Bundled.Chat.WebhookURL; w != "" {
		u, err := url.Parse(w)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The URL is a secret: never echo it.
			return invalid("bundled.chat.webhook_url", "an http or https URL")
		}
	}
	return nil
}

func (c *Config) validateHTTP() error {
	if err := ListenAddr("http.listen", c.HTTP.Listen); err != nil {
		return err
	}
	if c.HTTP.ReadTimeout < time.Second {
		return invalid("http.read_timeout", "a duration of at least 1s such as 1m, got %s", c.HTTP.ReadTimeout)
	}
	if c.HTTP.IdleTimeout < time.Second {
		return invalid("http.idle_timeout", "a duration of at least 1s such as 2m, got %s", c.HTTP.IdleTimeout)
	}
	names := map[string]bool{}
	for i, t := range c.HTTP.Tokens {
		key := fmt.Sprintf("http.tokens[%d]", i)
		if strings.TrimSpace(t.Name) == "" || names[t.Name] {
			return invalid(key+".name", "a unique user id for the token, got %q", t.Name)
		}
		names[t.Name] = true
		if (t.Token == "") == (t.TokenEnv == "") {
			return invalid(key, "exactly one of token or token_env")
		}
		if t.TokenEnv != "" && !envName.MatchString(t.TokenEnv) {
			return invalid(key+".token_env", "the name of an environment variable, got %q", t.TokenEnv)
		}
		if t.Role != RoleUser && t.Role != RoleAdmin {
			return invalid(key+".role", "user or admin, got %q", t.Role)
		}
	}
	// The inline tokens now; token_env values when a server resolves them.
	_, err := c.HTTP.secrets(nil)
	return err
}

// MinTokenLength is the shortest bearer token accepted, inline or from
// token_env: shorter ones are guessable.
const MinTokenLength = 16

// Secrets resolves every token's secret (inline, or from its token_env
// variable) in the order of http.tokens and checks them: set, not blank,
// at least MinTokenLength characters, and no two entries sharing one (a
// shared secret would authenticate as whichever entry comes first). The
// error names the key; it never holds a secret.
func (h HTTP) Secrets(env Env) ([]string, error) { return h.secrets(env) }

// secrets checks what it can resolve: with a nil env, the inline tokens.
func (h HTTP) secrets(env Env) ([]string, error) {
	out := make([]string, len(h.Tokens))
	first := map[string]string{} // secret -> key of the first entry holding it
	for i, t := range h.Tokens {
		key, secret := fmt.Sprintf("http.tokens[%d].token", i), t.Token
		if t.TokenEnv != "" {
			if env == nil {
				continue
			}
			key += "_env"
			if secret, _ = env(t.TokenEnv); secret == "" {
				return nil, invalid(key, "the variable %s to hold a token; it is unset or empty", t.TokenEnv)
			}
		}
		from := "a token"
		if t.TokenEnv != "" {
			from = "the variable " + t.TokenEnv + " to hold a token"
		}
		if strings.TrimSpace(secret) == "" {
			return nil, invalid(key, "%s that is not blank", from)
		}
		if utf8.RuneCountInString(secret) < MinTokenLength {
			return nil, invalid(key, "%s of at least %d characters", from, MinTokenLength)
		}
		if k, dup := first[secret]; dup {
			return nil, invalid(key, "%s of its own; it is the same as %s's", from, k)
		}
		first[secret] = key
		out[i] = secret
	}
	return out, nil
}

// ListenAddr checks a host:port listen address for key.
func ListenAddr(key, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port) // a number up to 65535, or a service name
	}
	if err != nil || port == "" || strings.ContainsAny(host, "/ ") {
		return invalid(key, "a listen address host:port such as 127.0.0.1:7411, got %q", addr)
	}
	return nil
}

// maxPrice bounds a price in llm.prices, in USD per million tokens.
const maxPrice = 1_000_000

func (c *Config) validatePrices() error {
	for _, model := range slices.Sorted(maps.Keys(c.LLM.Prices)) {
		p, key := c.LLM.Prices[model], "llm.prices."+model
		if strings.TrimSpace(model) == "" {
			return invalid("llm.prices", "model names as keys, got an empty one")
		}
		if !(p.Input >= 0) || !(p.Output >= 0) || (p.Cached != nil && !(*p.Cached >= 0)) {
			return invalid(key, "input, output and cached prices >= 0 in USD per million tokens")
		}
		// Far above any real price, and low enough that no cost overflows
		// to infinity or NaN, which no checkpoint can encode.
		if p.Input > maxPrice || p.Output > maxPrice || (p.Cached != nil && *p.Cached > maxPrice) {
			return invalid(key, "input, output and cached prices at most %d USD per million tokens", maxPrice)
		}
	}
	return nil
}

func (c *Config) validateBudgets() error {
	b := c.Budgets
	if b.OnExceed != contracts.OnExceedFail && b.OnExceed != contracts.OnExceedAsk {
		return invalid("budgets.on_exceed", "fail or ask, got %q", b.OnExceed)
	}
	for _, s := range []struct {
		key string
		b   contracts.Budget
	}{{"budgets.run", b.Run}, {"budgets.user_day", b.UserDay}} {
		if s.b.ModelCalls < 0 || s.b.Tokens < 0 || !(s.b.CostUSD >= 0) || s.b.Steps < 0 || s.b.WallTime < 0 {
			return invalid(s.key, "amounts >= 0 (0 means no limit): model_calls, tokens, cost_usd, steps, wall_time")
		}
		if _, priced := c.LLM.Prices[c.LLM.Model]; s.b.CostUSD > 0 && !priced {
			return invalid("llm.prices", "a price for llm.model %q: %s.cost_usd counts cost", c.LLM.Model, s.key)
		}
	}
	return nil
}

func (c *Config) validateLog() error {
	switch c.Log.Level {
	case "", "debug", "info", "warn", "error":
	default:
		return invalid("log.level", "debug, info, warn or error (or unset), got %q", c.Log.Level)
	}
	switch c.Log.Format {
	case "text", "json", "auto":
	default:
		return invalid("log.format", "text, json or auto, got %q", c.Log.Format)
	}
	return nil
}

func absDir(key, p string) error {
	if p == "" || !filepath.IsAbs(p) {
		return invalid(key, "an absolute directory path, got %q", p)
	}
	return nil
}

func intRange(key string, v, lo, hi int) error {
	if v < lo || v > hi {
		return invalid(key, "an integer from %d to %d, got %d", lo, hi, v)
	}
	return nil
}

// localeTag is the shape of a BCP 47 language tag: a language, then
// script, region or variant subtags.
var localeTag = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$`)
