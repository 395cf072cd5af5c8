package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ordo-run/ordo/contracts"
)

func envOf(kv ...string) Env {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// keyOf asserts err is a CodeInvalidConfig error and returns its key.
func keyOf(t *testing.T, err error) string {
	t.Helper()
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeInvalidConfig {
		t.Fatalf("want a CodeInvalidConfig error, got %v", err)
	}
	k, _ := ce.Details["key"].(string)
	return k
}

func TestDefaults(t *testing.T) {
	cfg, err := Parse(nil, t.TempDir(), envOf("HOME", "/home/ada"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != "/home/ada/.local/share/ordo" {
		t.Errorf("data_dir = %q", cfg.DataDir)
	}
	if cfg.PluginsDir != "/home/ada/.local/share/ordo/plugins.d" || cfg.Bundled.Files.Root != "/home/ada/.local/share/ordo/files" {
		t.Errorf("derived paths: %q %q", cfg.PluginsDir, cfg.Bundled.Files.Root)
	}
	wd, _ := os.Getwd()
	if cfg.Bundled.Sheets.Root != wd {
		t.Errorf("sheets root = %q, want the working directory", cfg.Bundled.Sheets.Root)
	}
	if cfg.Store != StoreEmbedded || cfg.LLM.APIKeyEnv != "OPENAI_API_KEY" || cfg.ReplanBudget != 3 || cfg.Log.Format != "auto" || cfg.MCP.MaxTasksPerUser != 16 {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg, err = Parse(nil, ".", envOf("HOME", "/home/ada", "XDG_DATA_HOME", "/xdg"))
	if err != nil || cfg.DataDir != "/xdg/ordo" {
		t.Fatalf("XDG_DATA_HOME: %v %q", err, cfg.DataDir)
	}
	_, err = Parse(nil, ".", envOf())
	if k := keyOf(t, err); k != "data_dir" {
		t.Errorf("no home: key %q", k)
	}
}

func TestInvalidNamesKey(t *testing.T) {
	secretDSN := "mysql://root:hunter2@db/ordo"
	cases := []struct{ name, yaml, key, says string }{
		{"unknown top-level", "datadir: /x\n", "datadir", "unknown key"},
		{"unknown nested", "llm:\n  modle: x\n", "llm.modle", "unknown key"},
		{"unknown in list item", "plugins:\n  - name: a\n    pth: /x\n", "plugins[0].pth", "unknown key"},
		{"int expected", "parallelism: lots\n", "parallelism", "an integer"},
		{"duration expected", "llm:\n  timeout: 5\n", "llm.timeout", "a duration"},
		{"bool expected", "hitl:\n  enabled: maybe\n", "hitl.enabled", "true or false"},
		{"list expected", "policy:\n  default_scopes: all\n", "policy.default_scopes", "a list"},
		{"mapping expected", "llm: openai\n", "llm", "a mapping"},
		{"range", "parallelism: 0\n", "parallelism", "from 1 to 256"},
		{"store", "store: " + secretDSN + "\n", "store", "Postgres URL"},
		{"base url", "llm:\n  base_url: localhost:11434\n", "llm.base_url", "http or https"},
		{"api key env", "llm:\n  api_key_env: sk-abc.def\n", "llm.api_key_env", "environment variable"},
		{"llm url credentials", "llm:\n  base_url: http://u:hunter2@h/v1\n", "llm.base_url", "in the variable llm.api_key_env names"},
		{"llm url query", "llm:\n  base_url: http://h/v1?api-key=hunter2\n", "llm.base_url", "without a query"},
		{"llm model", "llm:\n  model: \" \"\n", "llm.model", "a model name such as"},
		{"embedder url credentials", "recommender:\n  embedder: openai\n  openai: {base_url: \"http://u:hunter2@h/v1\"}\n", "recommender.openai.base_url", "in the variable recommender.openai.api_key_env names"},
		{"embedder model", "recommender:\n  embedder: openai\n  openai: {model: \"\"}\n", "recommender.openai.model", "an embedding model name"},
		{"embedder key env", "recommender:\n  embedder: openai\n  openai: {api_key_env: A-B}\n", "recommender.openai.api_key_env", "environment variable"},
		{"log level", "log:\n  level: loud\n", "log.level", "debug, info"},
		{"log format", "log:\n  format: xml\n", "log.format", "text, json or auto"},
		{"plugin sha", "plugins:\n  - name: a\n    path: /x\n    sha256: abc\n", "plugins[0].sha256", "SHA-256"},
		{"plugin dup", "plugins:\n  - {name: a, path: /x, sha256: " + strings.Repeat("a", 64) + "}\n  - {name: a, path: /y, sha256: " + strings.Repeat("b", 64) + "}\n", "plugins[1].name", "not used"},
		{"plugin bundled name", "plugins:\n  - {name: chat, path: /x, sha256: " + strings.Repeat("a", 64) + "}\n", "plugins[0].name", "not used"},
		{"token both", "http:\n  tokens:\n    - {name: a, token: 0123456789abcdef, token_env: T, role: user}\n", "http.tokens[0]", "exactly one"},
		{"token role", "http:\n  tokens:\n    - {name: a, token_env: T, role: root}\n", "http.tokens[0].role", "user or admin"},
		{"listen", "http:\n  listen: 7411\n", "http.listen", "host:port"},
		{"listen port", "http:\n  listen: 127.0.0.1:99999\n", "http.listen", "host:port"},
		{"read timeout", "http:\n  read_timeout: 0s\n", "http.read_timeout", "at least 1s"},
		{"idle timeout", "http:\n  idle_timeout: 500ms\n", "http.idle_timeout", "at least 1s"},
		{"webhook", "bundled:\n  chat:\n    webhook_url: ftp://x\n", "bundled.chat.webhook_url", "http or https"},
		{"files max bytes", "bundled:\n  files:\n    max_bytes: -1\n", "bundled.files.max_bytes", "0 for no limit"},
		{"chat max bytes", "bundled:\n  chat:\n    max_bytes: -5\n", "bundled.chat.max_bytes", "0 for no limit"},
		{"chat channel", "bundled:\n  chat:\n    channels: [general, \"a,b\"]\n", "bundled.chat.channels[1]", "a channel name"},
		{"tool pattern", "policy:\n  confirm_tools: [chat.post_message, chat]\n", "policy.confirm_tools[1]", "a tool name"},
		{"upstream both", "upstreams:\n  - {name: up, command: [x], url: http://h/mcp}\n", "upstreams[0].url", "not both"},
		{"upstream override", "upstreams:\n  - name: up\n    url: http://h/mcp\n    overrides:\n      w: {risk: scary}\n", "upstreams[0].overrides.w.risk", "not one of"},
		{"upstream token env", "upstreams:\n  - {name: up, url: http://h/mcp, bearer_token_env: a-b}\n", "upstreams[0].bearer_token_env", "environment variable"},
		{"upstream token stdio", "upstreams:\n  - {name: up, command: [x], bearer_token_env: TOK}\n", "upstreams[0].bearer_token_env", "HTTP upstream"},
		{"upstream name", "upstreams:\n  - {name: notes, url: http://h/mcp}\n", "upstreams[0].name", "not used"},
		{"upstream url secret env", "upstreams:\n  - {name: up, url: \"http://h/{secret}/mcp\", url_secret_env: a-b}\n", "upstreams[0].url_secret_env", "environment variable"},
		{"upstream url secret unused", "upstreams:\n  - {name: up, url: http://h/mcp, url_secret_env: KEY}\n", "upstreams[0].url_secret_env", "{secret}"},
		{"upstream url secret missing", "upstreams:\n  - {name: up, url: \"http://h/s/{secret}/mcp\"}\n", "upstreams[0].url_secret_env", "{secret}"},
		{"retention", "retention:\n  runs: -1h\n", "retention.runs", ">= 0"},
		{"max tasks", "mcp:\n  max_tasks_per_user: 0\n", "mcp.max_tasks_per_user", "from 1 to 10000"},
		{"metrics listen", "metrics:\n  listen: 9464\n", "metrics.listen", "host:port"},
		{"on exceed", "budgets:\n  on_exceed: maybe\n", "budgets.on_exceed", "fail or ask"},
		{"budget amount", "budgets:\n  run:\n    tokens: -1\n", "budgets.run", ">= 0"},
		{"budget duration", "budgets:\n  user_day:\n    wall_time: 10\n", "budgets.user_day.wall_time", "a duration"},
		{"cost budget unpriced", "budgets:\n  user_day:\n    cost_usd: 5\n", "llm.prices", `a price for llm.model "gpt-4.1-mini"`},
		{"price", "llm:\n  prices:\n    m: {input: 1, output: -2}\n", "llm.prices.m", ">= 0"},
		{"price infinite", "llm:\n  prices:\n    m: {input: .inf, output: 2}\n", "llm.prices.m", "at most 1000000"},
		{"price huge", "llm:\n  prices:\n    m: {input: 1, output: 2, cached: 1e300}\n", "llm.prices.m", "at most 1000000"},
		{"two documents", "parallelism: 2\n---\nparallelism: 3\n", "config", "one YAML document"},
		{"syntax", "llm: [\n", "config", "not valid YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "/etc/ordo", envOf("HOME", "/home/ada"))
			if k := keyOf(t, err); k != tc.key {
				t.Errorf("key = %q, want %q (%v)", k, tc.key, err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("message %q does not say %q", err, tc.says)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("message leaks a secret: %q", err)
			}
		})
	}
}

func TestEnvOverrides(t *testing.T) {
	file := "parallelism: 2\nstore: postgres://ordo@db/ordo\nlog:\n  level: warn\n"
	cfg, err := Parse([]byte(file), "/etc/ordo", envOf(
		"HOME", "/home/ada",
		"ORDO_PARALLELISM", "9",
		"ORDO_STORE", "embedded",
		"ORDO_LOG_LEVEL", "", // empty counts as unset
		"ORDO_LLM_TIMEOUT", "2m",
		"ORDO_LLM_BASE_URL", "http://127.0.0.1:11434/v1",
		"ORDO_DATA_DIR", "rel/data",
	))
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if cfg.Parallelism != 9 || cfg.Store != StoreEmbedded || cfg.Log.Level != "warn" || cfg.LLM.Timeout != 2*time.Minute ||
		cfg.LLM.BaseURL != "http://127.0.0.1:11434/v1" || cfg.DataDir != filepath.Join(wd, "rel/data") {
		t.Errorf("overrides not applied: %+v", cfg)
	}
	if cfg.PluginsDir != filepath.Join(wd, "rel/data/plugins.d") {
		t.Errorf("plugins_dir should follow the overridden data_dir: %q", cfg.PluginsDir)
	}
	_, err = Parse(nil, ".", envOf("HOME", "/h", "ORDO_REPLAN_BUDGET", "three"))
	if k := keyOf(t, err); k != "replan_budget" || !strings.Contains(err.Error(), "ORDO_REPLAN_BUDGET") {
		t.Errorf("bad env value: key %q, %v", k, err)
	}
}

// TestEveryOverrideAppliesToItsKey proves each variable sets the same field
// as its key in a file.
func TestEveryOverrideAppliesToItsKey(t *testing.T) {
	for _, o := range Overrides {
		var value string
		switch v := o.ptr(Default()).(type) {
		case *string:
			value = "/sample/" + o.Env
		case *int:
			value = "7"
		case *bool:
			value = strconv.FormatBool(!*v)
		case *time.Duration:
			value = "7m"
		default:
			t.Fatalf("%s: unhandled type %T", o.Env, v)
		}
		parts := strings.Split(o.Key, ".")
		var doc strings.Builder
		for i, p := range parts {
			doc.WriteString(strings.Repeat("  ", i) + p + ":")
			if i < len(parts)-1 {
				doc.WriteString("\n")
			}
		}
		doc.WriteString(" " + value + "\n")
		fromFile, fromEnv := Default(), Default()
		if err := decodeFile(fromFile, []byte(doc.String())); err != nil {
			t.Fatalf("%s: %v", o.Key, err)
		}
		if err := fromEnv.applyEnv(envOf(o.Env, value)); err != nil {
			t.Fatalf("%s: %v", o.Env, err)
		}
		if !reflect.DeepEqual(fromFile, fromEnv) || reflect.DeepEqual(fromEnv, Default()) {
			t.Errorf("%s does not set key %s", o.Env, o.Key)
		}
	}
}

func TestRelativePathsFromFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ordo.yaml")
	sum := strings.Repeat("c", 64)
	os.WriteFile(p, []byte("data_dir: data\nplugins:\n  - {name: hello, path: bin/hello, sha256: "+sum+"}\n"), 0o600)
	cfg, err := Load(p, envOf("HOME", "/h"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != filepath.Join(dir, "data") || cfg.Plugins[0].Path != filepath.Join(dir, "bin/hello") {
		t.Errorf("paths not relative to the file: %q %q", cfg.DataDir, cfg.Plugins[0].Path)
	}
	cfg2, err := Load("", envOf("HOME", "/h", EnvConfig, p))
	if err != nil || !reflect.DeepEqual(cfg, cfg2) {
		t.Errorf("ORDO_CONFIG should load the same file: %v", err)
	}
	_, err = Load(filepath.Join(dir, "missing.yaml"), envOf("HOME", "/h"))
	if k := keyOf(t, err); k != "config" {
		t.Errorf("missing file: key %q", k)
	}
}

// TestExampleHasEveryKey keeps examples/ordo.yaml and README.md complete:
// every key of Config appears in both, and the example loads.
func TestExampleHasEveryKey(t *testing.T) {
	example := filepath.Join("..", "..", "..", "..", "examples", "ordo.yaml")
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(example, envOf("HOME", "/h")); err != nil {
		t.Fatalf("the example does not load: %v", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	inExample := map[string]bool{}
	collectKeys(&doc, "", inExample)
	docs, _ := os.ReadFile(filepath.Join("..", "..", "..", "..", "README.md"))
	for _, k := range keyPaths(reflect.TypeOf(Config{}), "") {
		// The example shows tokens only through token_env, the safe way.
		if !inExample[k] && k != "http.tokens[].token" {
			t.Errorf("examples/ordo.yaml lacks key %s", k)
		}
		if !strings.Contains(string(docs), "`"+k+"`") {
			t.Errorf("README.md does not document key %s", k)
		}
	}
}

// keyPaths lists the dotted leaf keys of a config type; list and map
// elements count as their parent's leaves ("plugins[].name").
func keyPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		key := joinKey(prefix, tag)
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Struct && ft != reflect.TypeOf(time.Duration(0)):
			out = append(out, keyPaths(ft, key)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, keyPaths(ft.Elem(), key+"[]")...)
		default:
			out = append(out, key)
		}
	}
	sort.Strings(out)
	return out
}

func collectKeys(n *yaml.Node, path string, into map[string]bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			collectKeys(c, path, into)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := joinKey(path, n.Content[i].Value)
			into[p] = true
			if n.Content[i+1].Kind != yaml.MappingNode || !strings.HasSuffix(p, "users") && !strings.HasSuffix(p, "env") {
				collectKeys(n.Content[i+1], p, into)
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			collectKeys(c, path+"[]", into)
		}
	}
}

// TestTokenSecrets: the 16-character minimum holds for token_env values as
// for inline tokens, and a blank secret or one shared by two entries is
// refused; each error names the key and never holds the secret.
func TestTokenSecrets(t *testing.T) {
	const good = "0123456789abcdef"
	cases := []struct{ name, tokens, key, says string }{
		{"env too short", "    - {name: a, token_env: A, role: user}\n", "http.tokens[0].token_env", "at least 16"},
		{"env blank", "    - {name: b, token: " + good + "x, role: user}\n    - {name: a, token_env: BLANK, role: user}\n", "http.tokens[1].token_env", "not blank"},
		{"env unset", "    - {name: a, token_env: UNSET, role: user}\n", "http.tokens[0].token_env", "unset or empty"},
		{"inline blank", "    - {name: a, token: '                ', role: user}\n", "http.tokens[0].token", "not blank"},
		{"inline too short", "    - {name: a, token: short-token, role: user}\n", "http.tokens[0].token", "at least 16"},
		{"inline twice", "    - {name: a, token: " + good + ", role: user}\n    - {name: b, token: " + good + ", role: admin}\n", "http.tokens[1].token", "http.tokens[0].token"},
		{"inline then env", "    - {name: a, token: " + good + ", role: user}\n    - {name: b, token_env: SAME, role: admin}\n", "http.tokens[1].token_env", "http.tokens[0].token"},
		{"env then env", "    - {name: a, token_env: SAME, role: user}\n    - {name: b, token_env: SAME2, role: admin}\n", "http.tokens[1].token_env", "http.tokens[0].token_env"},
	}
	env := envOf("HOME", "/home/ada", "A", "short-secret", "BLANK", strings.Repeat(" ", 20), "SAME", good, "SAME2", good)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := func() error {
				cfg, err := Parse([]byte("http:\n  tokens:\n"+tc.tokens), "/etc/ordo", env)
				if err != nil {
					return err
				}
				_, err = cfg.HTTP.Secrets(env)
				return err
			}()
			if err == nil {
				t.Fatal("accepted")
			}
			if k := keyOf(t, err); k != tc.key {
				t.Errorf("key = %q, want %q (%v)", k, tc.key, err)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("message %q does not say %q", err, tc.says)
			}
			for _, secret := range []string{good, "short-secret", "short-token"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("message leaks a secret: %q", err)
				}
			}
		})
	}
	cfg, err := Parse([]byte("http:\n  tokens:\n    - {name: a, token: "+good+", role: user}\n    - {name: b, token_env: LONG, role: admin}\n"), "/etc/ordo", env)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := cfg.HTTP.Secrets(envOf("LONG", "another-secret-0123"))
	if err != nil || len(secrets) != 2 || secrets[0] != good || secrets[1] != "another-secret-0123" {
		t.Fatalf("secrets %q, %v", secrets, err)
	}
}
