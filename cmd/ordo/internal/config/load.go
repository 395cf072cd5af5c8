package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ordo-run/ordo/contracts"
)

// Env looks up an environment variable; os.LookupEnv in production, a map
// in tests.
type Env func(key string) (string, bool)

// EnvConfig names the variable that gives the config file's path when
// --config is not used.
const EnvConfig = "ORDO_CONFIG"

// Override maps one environment variable to the key it overrides.
type Override struct {
	Env  string
	Key  string
	path bool // a file-system path, made absolute against the working directory
	ptr  func(c *Config) any
}

// Overrides lists every environment variable that overrides a key, in the
// order they are applied. An empty value counts as unset.
var Overrides = []Override{
	{Env: "ORDO_DATA_DIR", Key: "data_dir", path: true, ptr: func(c *Config) any { return &c.DataDir }},
	{Env: "ORDO_STORE", Key: "store", ptr: func(c *Config) any { return &c.Store }},
	{Env: "ORDO_LLM_BASE_URL", Key: "llm.base_url", ptr: func(c *Config) any { return &c.LLM.BaseURL }},
	{Env: "ORDO_LLM_MODEL", Key: "llm.model", ptr: func(c *Config) any { return &c.LLM.Model }},
	{Env: "ORDO_LLM_API_KEY_ENV", Key: "llm.api_key_env", ptr: func(c *Config) any { return &c.LLM.APIKeyEnv }},
	{Env: "ORDO_LLM_TIMEOUT", Key: "llm.timeout", ptr: func(c *Config) any { return &c.LLM.Timeout }},
	{Env: "ORDO_LLM_MAX_RETRIES", Key: "llm.max_retries", ptr: func(c *Config) any { return &c.LLM.MaxRetries }},
	{Env: "ORDO_LLM_STRUCTURED_OUTPUTS", Key: "llm.structured_outputs", ptr: func(c *Config) any { return &c.LLM.StructuredOutputs }},
	{Env: "ORDO_HITL_ENABLED", Key: "hitl.enabled", ptr: func(c *Config) any { return &c.HITL.Enabled }},
	{Env: "ORDO_PARALLELISM", Key: "parallelism", ptr: func(c *Config) any { return &c.Parallelism }},
	{Env: "ORDO_REPLAN_BUDGET", Key: "replan_budget", ptr: func(c *Config) any { return &c.ReplanBudget }},
	{Env: "ORDO_ON_FAILURE", Key: "on_failure", ptr: func(c *Config) any { return &c.OnFailure }},
	{Env: "ORDO_CANDIDATES_K", Key: "candidates_k", ptr: func(c *Config) any { return &c.CandidatesK }},
	{Env: "ORDO_ALL_TOOLS_MAX", Key: "all_tools_max", ptr: func(c *Config) any { return &c.AllToolsMax }},
	{Env: "ORDO_PROMPT_STATE_BYTES", Key: "prompt_state_bytes", ptr: func(c *Config) any { return &c.PromptStateBytes }},
	{Env: "ORDO_TIMEZONE", Key: "timezone", ptr: func(c *Config) any { return &c.Timezone }},
	{Env: "ORDO_LOCALE", Key: "locale", ptr: func(c *Config) any { return &c.Locale }},
	{Env: "ORDO_LEASE_TTL", Key: "lease_ttl", ptr: func(c *Config) any { return &c.LeaseTTL }},
	{Env: "ORDO_PLUGINS_DIR", Key: "plugins_dir", path: true, ptr: func(c *Config) any { return &c.PluginsDir }},
	{Env: "ORDO_BUNDLED_ENABLED", Key: "bundled.enabled", ptr: func(c *Config) any { return &c.Bundled.Enabled }},
	{Env: "ORDO_FILES_ROOT", Key: "bundled.files.root", path: true, ptr: func(c *Config) any { return &c.Bundled.Files.Root }},
	{Env: "ORDO_SHEETS_ROOT", Key: "bundled.sheets.root", path: true, ptr: func(c *Config) any { return &c.Bundled.Sheets.Root }},
	{Env: "ORDO_CHAT_WEBHOOK_URL", Key: "bundled.chat.webhook_url", ptr: func(c *Config) any { return &c.Bundled.Chat.WebhookURL }},
	{Env: "ORDO_EXPOSE_TOOLS", Key: "expose_tools", ptr: func(c *Config) any { return &c.ExposeTools }},
	{Env: "ORDO_HTTP_LISTEN", Key: "http.listen", ptr: func(c *Config) any { return &c.HTTP.Listen }},
	{Env: "ORDO_LOG_LEVEL", Key: "log.level", ptr: func(c *Config) any { return &c.Log.Level }},
	{Env: "ORDO_LOG_FORMAT", Key: "log.format", ptr: func(c *Config) any { return &c.Log.Format }},
	{Env: "ORDO_MEMORY_ENABLED", Key: "memory.enabled", ptr: func(c *Config) any { return &c.Memory.Enabled }},
	{Env: "ORDO_RECOMMENDER_EMBEDDER", Key: "recommender.embedder", ptr: func(c *Config) any { return &c.Recommender.Embedder }},
	{Env: "ORDO_RETENTION_RUNS", Key: "retention.runs", ptr: func(c *Config) any { return &c.Retention.Runs }},
	{Env: "ORDO_PLUGIN_HOST_CALL_TIMEOUT", Key: "plugin_host.call_timeout", ptr: func(c *Config) any { return &c.PluginHost.CallTimeout }},
	{Env: "ORDO_PLUGIN_HOST_DRAIN_TIMEOUT", Key: "plugin_host.drain_timeout", ptr: func(c *Config) any { return &c.PluginHost.DrainTimeout }},
	{Env: "ORDO_POSTGRES_MAX_CONNS", Key: "postgres.max_conns", ptr: func(c *Config) any { return &c.Postgres.MaxConns }},
}

// Load reads the configuration: the defaults, then the YAML file File
// finds, then the environment overrides, and validates the result.
// Relative paths in the file are relative to the file's directory; in the
// environment, to the working directory.
func Load(given string, env Env) (*Config, error) {
	path, named := File(given, env)
	var data []byte
	baseDir := "."
	if path != "" {
		var err error
		data, err = os.ReadFile(path)
		switch {
		case err == nil:
			baseDir = filepath.Dir(path)
		case !named && errors.Is(err, fs.ErrNotExist):
			path = "" // no file at the default place: the defaults
		default:
			e := contracts.Errorf(contracts.CodeInvalidConfig, "config file: %w", err).
				With("key", "config").With("file", path)
			if given == "" && named {
				e = e.With("env", EnvConfig) // the path came from $ORDO_CONFIG
			}
			return nil, e
		}
	}
	cfg, err := Parse(data, baseDir, env)
	if err != nil {
		var ce *contracts.Error
		if errors.As(err, &ce) && path != "" {
			return nil, ce.With("file", path)
		}
		return nil, err
	}
	return cfg, nil
}

// File is the configuration file to read: path (--config), else
// $ORDO_CONFIG, else DefaultFile. named says it was named, so it must
// exist; the default file is read only if it does.
func File(path string, env Env) (file string, named bool) {
	if path == "" {
		path, _ = env(EnvConfig)
	}
	if path != "" {
		return expandHome(path, env), true
	}
	return DefaultFile(env), false
}

// DefaultFile is where the configuration lives when nothing names a file
// (and where `ordo plugins add --save` writes): $XDG_CONFIG_HOME/ordo/ordo.yaml,
// else ~/.config/ordo/ordo.yaml; "" when neither variable is usable.
func DefaultFile(env Env) string {
	if x, ok := env("XDG_CONFIG_HOME"); ok && filepath.IsAbs(x) {
		return filepath.Join(x, "ordo", "ordo.yaml")
	}
	if h, ok := env("HOME"); ok && filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "ordo", "ordo.yaml")
	}
	return ""
}

// Parse decodes one YAML document over the defaults, applies env's
// overrides and validates. Every failure is a contracts.CodeInvalidConfig
// error whose "key" detail names the key (dotted, e.g. "llm.timeout").
func Parse(data []byte, baseDir string, env Env) (*Config, error) {
	cfg := Default()
	if err := decodeFile(cfg, data); err != nil {
		return nil, err
	}
	absBase, err := filepath.Abs(baseDir)
	if err != nil {
		return nil, invalid("config", "a readable directory for the config file: %v", err)
	}
	cfg.resolvePaths(absBase, env)
	if err := cfg.applyEnv(env); err != nil {
		return nil, err
	}
	if err := cfg.addEnvTokens(env); err != nil {
		return nil, err
	}
	if err := cfg.fillDerived(env); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, fromEnv(err, env)
	}
	return cfg, nil
}

// fromEnv adds to a validation error the variable that set its key: a
// value from ORDO_LOG_FORMAT in a shell profile is in no file to look at.
func fromEnv(err error, env Env) error {
	ce := contracts.AsError(err)
	for _, o := range Overrides {
		if v, ok := env(o.Env); ok && v != "" && ce.Details["key"] == o.Key {
			return ce.With("env", o.Env)
		}
	}
	return err
}

func decodeFile(cfg *Config, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(cfg)
	if errors.Is(err, io.EOF) {
		return nil // an empty file: defaults
	}
	if err != nil {
		return yamlError(data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return invalid("config", "one YAML document, found more")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return yamlError(data, err)
	}
	return fraction(&doc, reflect.TypeOf(cfg), "")
}

// duplicateKey is yaml.v3's report of a key given twice in one mapping.
var duplicateKey = regexp.MustCompile(`^line (\d+): mapping key "(.*)" already defined at line (\d+)$`)

var typeErrorLine = regexp.MustCompile(`^line (\d+): (?:cannot unmarshal (\S+)(?: .*)? into (\S+)|field (\S+) not found in type)`)

// yamlError turns a yaml.v3 error into a coded error naming the key. yaml
// reports only line numbers, so the document is walked to map lines to keys.
func yamlError(data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		e := contracts.Errorf(contracts.CodeInvalidConfig, "config is not valid YAML: %w", err).With("key", "config")
		if line := tabIndented(data, err); line > 0 {
			e = contracts.Errorf(contracts.CodeInvalidConfig, "config is not valid YAML: line %d is indented with a tab; YAML indents with spaces only", line).
				With("key", "config").With("line", line)
		}
		return e
	}
	first := te.Errors[0]
	if d := duplicateKey.FindStringSubmatch(first); d != nil {
		line, _ := strconv.Atoi(d[1])
		key := keyAtLine(data, line)
		if key == "" {
			key = d[2]
		}
		return contracts.Errorf(contracts.CodeInvalidConfig, "config key %s: given twice, on lines %s and %d; keep one", key, d[3], line).
			With("key", key).With("line", line)
	}
	m := typeErrorLine.FindStringSubmatch(first)
	if m == nil {
		return invalid("config", "%s", first)
	}
	line, _ := strconv.Atoi(m[1])
	key := keyAtLine(data, line)
	if key == "" || m[3] == "config.Config" { // the document itself
		key = "config"
	}
	if m[3] == "config.Config" {
		return contracts.Errorf(contracts.CodeInvalidConfig, "config file: expected a mapping of keys such as \"parallelism: 4\", got %s (line %d)", yamlKind(m[2]), line).
			With("key", key).With("line", line)
	}
	var e *contracts.Error
	if m[4] != "" {
		e = contracts.Errorf(contracts.CodeInvalidConfig, "config key %s: unknown key (line %d)%s", key, line, knownKeys(key))
	} else {
		e = contracts.Errorf(contracts.CodeInvalidConfig, "config key %s: expected %s, got %s (line %d)",
			key, expectation(m[3]), yamlKind(m[2]), line)
	}
	e = e.With("key", key).With("line", line)
	if len(te.Errors) > 1 {
		e = e.With("more_errors", len(te.Errors)-1)
	}
	return e
}

var syntaxLine = regexp.MustCompile(`^yaml: line (\d+):`)

// tabIndented is the line of a YAML syntax error when a tab indents it
// (yaml.v3 says only "found character that cannot start any token"), else 0.
func tabIndented(data []byte, err error) int {
	m := syntaxLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	lines := bytes.Split(data, []byte("\n"))
	if n < 1 || n > len(lines) || !bytes.HasPrefix(bytes.TrimLeft(lines[n-1], " "), []byte("\t")) {
		return 0
	}
	return n
}

// keyAtLine returns the dotted path of the first key or value on line.
func keyAtLine(data []byte, line int) string {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return ""
	}
	found := ""
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if found != "" || n == nil {
			return
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := joinKey(path, k.Value)
				if k.Line == line {
					found = p
					return
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		default:
			if n.Line == line {
				found = path
			}
		}
	}
	walk(&doc, "")
	return found
}

// knownKeys lists the keys the mapping holding key accepts, for an unknown
// key's error: "; llm takes: base_url, model, …" (a typo shows its fix).
func knownKeys(key string) string {
	t := reflect.TypeFor[Config]()
	parts := strings.Split(key, ".")
	parent := strings.Join(parts[:len(parts)-1], ".")
	for _, part := range parts[:len(parts)-1] {
		name, _, _ := strings.Cut(part, "[")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Map { // part is a key of the map (llm.prices.MODEL)
			t = t.Elem()
			continue
		}
		f, ok := yamlField(t, name)
		if !ok {
			return ""
		}
		t = f.Type
		if strings.Contains(part, "[") {
			t = t.Elem()
		}
	}
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	var names []string
	for f := range t.Fields() {
		if name := yamlName(f); name != "" {
			names = append(names, name)
		}
	}
	if parent == "" {
		parent = "the file"
	}
	return fmt.Sprintf("; %s takes: %s", parent, strings.Join(names, ", "))
}

// yamlField is t's field whose yaml name is name.
func yamlField(t reflect.Type, name string) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for f := range t.Fields() {
		if yamlName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// yamlName is the key a struct field is read from ("" if none).
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

func joinKey(parent, k string) string {
	if parent == "" {
		return k
	}
	return parent + "." + k
}

// expectation says in words what a Go type accepts.
func expectation(goType string) string {
	switch {
	case goType == "int":
		return "an integer"
	case goType == "bool":
		return "true or false"
	case goType == "time.Duration":
		return "a duration such as 30s, 5m or 720h"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	default:
		return "a mapping"
	}
}

func yamlKind(tag string) string {
	switch tag {
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	case "!!str":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	default:
		return tag
	}
}

// resolvePaths makes the file's relative paths absolute against base.
// Path keys default to "", so a non-empty value here came from the file.
func (c *Config) resolvePaths(base string, env Env) {
	for _, p := range c.pathKeys() {
		*p = expandHome(*p, env)
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(base, *p)
		}
	}
}

// expandHome makes a leading ~ (alone or before a slash) $HOME: a YAML
// file keeps "~/ordo" as written, and so does a shell in "--data-dir=~/ordo"
// or a quoted variable; taken as relative paths they made a directory
// named "~".
func expandHome(p string, env Env) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	if home, ok := env("HOME"); ok && filepath.IsAbs(home) {
		return filepath.Join(home, p[1:])
	}
	return p
}

func (c *Config) pathKeys() []*string {
	ps := []*string{&c.DataDir, &c.PluginsDir, &c.Bundled.Files.Root, &c.Bundled.Sheets.Root, &c.PromptsDir}
	for i := range c.Plugins {
		ps = append(ps, &c.Plugins[i].Path)
	}
	return ps
}

func (c *Config) applyEnv(env Env) error {
	for _, o := range Overrides {
		v, ok := env(o.Env)
		if !ok || v == "" {
			continue
		}
		n := yaml.Node{Kind: yaml.ScalarNode, Value: v}
		if err := fraction(&n, reflect.TypeOf(o.ptr(c)), o.Key); err != nil {
			return contracts.AsError(err).With("env", o.Env)
		}
		if err := n.Decode(o.ptr(c)); err != nil {
			return contracts.Errorf(contracts.CodeInvalidConfig, "config key %s (from %s): expected %s",
				o.Key, o.Env, expectation(fmt.Sprintf("%T", o.ptr(c))[1:])).With("key", o.Key).With("env", o.Env)
		}
		if o.path {
			p := o.ptr(c).(*string)
			abs, err := filepath.Abs(expandHome(v, env)) // v as given: YAML reads "~" alone as null
			if err != nil {
				return invalid(o.Key, "a usable path: %v", err)
			}
			*p = abs
		}
	}
	return nil
}

// fillDerived sets the defaults that depend on the data directory or the
// process (home, working directory).
func (c *Config) fillDerived(env Env) error {
	if c.DataDir == "" {
		dir, err := DefaultDataDir(env)
		if err != nil {
			return err
		}
		c.DataDir = dir
	}
	if c.PluginsDir == "" {
		c.PluginsDir = filepath.Join(c.DataDir, "plugins.d")
	}
	if c.Bundled.Files.Root == "" {
		c.Bundled.Files.Root = filepath.Join(c.DataDir, "files")
	}
	if c.Bundled.Sheets.Root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return invalid("bundled.sheets.root", "a directory (the working directory is unusable: %v)", err)
		}
		c.Bundled.Sheets.Root = wd
	}
	return nil
}

// DefaultDataDir is $XDG_DATA_HOME/ordo, else ~/.local/share/ordo.
func DefaultDataDir(env Env) (string, error) {
	if x, ok := env("XDG_DATA_HOME"); ok && filepath.IsAbs(x) {
		return filepath.Join(x, "ordo"), nil
	}
	if h, ok := env("HOME"); ok && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "share", "ordo"), nil
	}
	return "", invalid("data_dir", "a directory: set data_dir, ORDO_DATA_DIR, XDG_DATA_HOME or HOME")
}

// invalid builds the coded error for key, saying what is expected.
func invalid(key, expected string, args ...any) *contracts.Error {
	return contracts.Errorf(contracts.CodeInvalidConfig, "config key %s: expected %s", key, fmt.Sprintf(expected, args...)).
		With("key", key)
}

// fraction refuses a number with a fraction where the key takes a whole
// one (an integer or a duration): yaml.v3 truncates it, so `steps: 0.5`
// became 0, which is no limit at all. n is walked beside t, the type it
// decodes into; key is n's dotted path.
func fraction(n *yaml.Node, t reflect.Type, key string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := fraction(c, t, key); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			var vt reflect.Type
			switch t.Kind() {
			case reflect.Map:
				vt = t.Elem()
			case reflect.Struct:
				f, ok := yamlField(t, k.Value)
				if !ok {
					continue
				}
				vt = f.Type
			default:
				continue
			}
			if err := fraction(v, vt, joinKey(key, k.Value)); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return nil
		}
		for i, c := range n.Content {
			if err := fraction(c, t.Elem(), fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		if n.ShortTag() != "!!float" || t.Kind() < reflect.Int || t.Kind() > reflect.Uint64 {
			return nil
		}
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil && f == math.Trunc(f) {
			return nil // 4.0 is four
		}
		e := contracts.Errorf(contracts.CodeInvalidConfig, "config key %s: expected %s, got %s, which would be cut to a whole number",
			key, expectation(t.String()), n.Value).With("key", key)
		if n.Line > 0 {
			e = e.With("line", n.Line)
		}
		return e
	}
	return nil
}
