package host

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ordo-run/ordo/contracts"
)

// UpstreamSpec declares one upstream MCP server: exactly one of Command
// (stdio) or URL (streamable HTTP). The host checks and keeps it, like a
// PluginSpec; speaking to the server is the UpstreamOpener's job.
type UpstreamSpec struct {
	// Name is the source name and the service of every tool ("NAME.tool"):
	// lower-case letters, digits, _ and -, starting with a letter.
	Name string `json:"name" yaml:"name"`
	// Command is the program and its arguments, run without a shell.
	Command []string `json:"command,omitempty" yaml:"command,omitempty"`
	// Env is added to the few neutral variables a stdio upstream inherits
	// (PATH HOME TMPDIR LANG TZ); Ordo's own environment never reaches it.
	Env map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
	// URL is a streamable-HTTP MCP endpoint, http or https. A key it
	// carries in its path goes in URLSecret, the URL holding
	// URLSecretPlaceholder where it goes; it is shown as ShownURL shows it.
	URL string `json:"url,omitempty" yaml:"url,omitempty"`
	// URLSecret replaces URLSecretPlaceholder in URL where requests are sent.
	URLSecret string `json:"url_secret,omitempty" yaml:"url_secret,omitempty"`
	// BearerToken, when set, is sent as "Authorization: Bearer ..." to URL.
	BearerToken string `json:"bearer_token,omitempty" yaml:"bearer_token,omitempty"`
	// Overrides adjust tools by their upstream name (or catalog id).
	Overrides map[string]ToolOverride `json:"overrides,omitempty" yaml:"overrides,omitempty"`
	// PollInterval is how often the tool list is re-read and hashed, which
	// also notices an HTTP server that went away (default 30 s).
	PollInterval time.Duration `json:"poll_interval,omitempty" yaml:"poll_interval,omitempty"`
}

// ToolOverride replaces what Ordo would derive from an upstream tool's
// annotations. Empty fields keep the derived value.
type ToolOverride struct {
	Risk      contracts.Risk `json:"risk,omitempty" yaml:"risk,omitempty"`
	Scopes    []string       `json:"scopes,omitempty" yaml:"scopes,omitempty"`
	Tags      []string       `json:"tags,omitempty" yaml:"tags,omitempty"`
	TimeoutMS int            `json:"timeout_ms,omitempty" yaml:"timeout_ms,omitempty"`
	// SecretFields are arguments recorded as [REDACTED], on top of those
	// the tool's schema marks writeOnly or format "password".
	SecretFields []string `json:"secret_fields,omitempty" yaml:"secret_fields,omitempty"`
}

var upstreamNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// Check reports the first bad field as CodeInvalidInput with detail
// "field" (e.g. "url", "overrides.write_file.risk").
func (s UpstreamSpec) Check() error {
	bad := func(field, format string, args ...any) error {
		return contracts.Errorf(contracts.CodeInvalidInput, "upstream %q: %s: "+format, append([]any{s.Name, field}, args...)...).
			With("field", field).With("upstream", s.Name)
	}
	if !upstreamNamePattern.MatchString(s.Name) {
		return bad("name", "must match %s", upstreamNamePattern)
	}
	switch {
	case len(s.Command) == 0 && s.URL == "":
		return bad("command", "give a command or a url")
	case len(s.Command) > 0 && s.URL != "":
		return bad("url", "give a command or a url, not both")
	case len(s.Command) > 0 && strings.TrimSpace(s.Command[0]) == "":
		return bad("command", "empty program")
	}
	if s.URL != "" {
		// The URL is not quoted back: one that is refused may hold a
		// password, and the error is logged and shown.
		u, err := url.Parse(s.URL)
		switch {
		case err != nil:
			return bad("url", "not a URL")
		case u.User != nil: // shown by Sources and in errors; a token belongs in bearer_token
			return bad("url", "carries credentials (user:password@); give a token as the bearer token instead")
		case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return bad("url", "%q is not an http(s) URL", ShownURL(s.URL))
		case strings.Count(s.URL, URLSecretPlaceholder) > 1:
			return bad("url", "holds %s more than once", URLSecretPlaceholder)
		case strings.Contains(s.URL, URLSecretPlaceholder) != (s.URLSecret != ""):
			return bad("url_secret", "give a URL secret exactly when the URL holds %s", URLSecretPlaceholder)
		}
	} else if s.BearerToken != "" {
		return bad("bearer_token", "only an HTTP upstream takes a bearer token")
	} else if s.URLSecret != "" {
		return bad("url_secret", "only an HTTP upstream takes a URL secret")
	}
	if strings.ContainsAny(s.BearerToken, "\r\n") {
		return bad("bearer_token", "contains a line break")
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(s.Env[k], "\x00") {
			return bad("env", "bad variable %q", k)
		}
	}
	if s.PollInterval < 0 {
		return bad("poll_interval", "%s is negative", s.PollInterval)
	}
	for _, tool := range slices.Sorted(maps.Keys(s.Overrides)) {
		if err := s.Overrides[tool].check(); err != nil {
			return bad("overrides."+tool+"."+err.field, "%s", err.msg)
		}
	}
	return nil
}

type fieldError struct{ field, msg string }

func (o ToolOverride) check() *fieldError {
	switch o.Risk {
	case "", contracts.RiskRead, contracts.RiskWrite, contracts.RiskDestructive:
	default:
		return &fieldError{"risk", fmt.Sprintf("%q is not one of read, write, destructive", o.Risk)}
	}
	for _, tag := range o.Tags {
		if !slices.Contains(knownTags, tag) {
			return &fieldError{"tags", fmt.Sprintf("unknown tag %q (want one of %s)", tag, strings.Join(knownTags, ", "))}
		}
	}
	for _, sc := range o.Scopes {
		if strings.TrimSpace(sc) == "" {
			return &fieldError{"scopes", "empty scope"}
		}
	}
	if slices.Contains(o.SecretFields, "") {
		return &fieldError{"secret_fields", "empty field name"}
	}
	if o.TimeoutMS < 0 {
		return &fieldError{"timeout_ms", fmt.Sprintf("%d is negative", o.TimeoutMS)}
	}
	return nil
}

var knownTags = []string{contracts.TagPII, contracts.TagExternalSend, contracts.TagFinancial, contracts.TagAdmin,
	contracts.TagDelete, contracts.TagSharePublic}

// Transport says how the upstream is reached: "stdio" or "http".
func (s UpstreamSpec) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

// path is what Sources shows as the upstream's path.
func (s UpstreamSpec) path() string {
	if s.URL != "" {
		return ShownURL(s.URL)
	}
	return strings.Join(s.Command, " ")
}
