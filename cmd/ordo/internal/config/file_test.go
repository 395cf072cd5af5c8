package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
)

// TestDefaultFile: with neither --config nor ORDO_CONFIG, the file at
// $XDG_CONFIG_HOME/ordo/ordo.yaml (else ~/.config/ordo/ordo.yaml) is read
// when it exists; when it does not, the defaults apply. A named file
// must exist.
func TestDefaultFile(t *testing.T) {
	home, xdg := t.TempDir(), t.TempDir()
	if got := DefaultFile(envOf("HOME", home)); got != filepath.Join(home, ".config", "ordo", "ordo.yaml") {
		t.Errorf("DefaultFile with HOME: %s", got)
	}
	if got := DefaultFile(envOf("HOME", home, "XDG_CONFIG_HOME", xdg)); got != filepath.Join(xdg, "ordo", "ordo.yaml") {
		t.Errorf("DefaultFile with XDG_CONFIG_HOME: %s", got)
	}
	if got := DefaultFile(envOf("HOME", "relative")); got != "" {
		t.Errorf("DefaultFile without a usable variable: %q", got)
	}
	env := envOf("HOME", home, "XDG_CONFIG_HOME", xdg)
	cfg, err := Load("", env)
	if err != nil || cfg.Parallelism != Default().Parallelism {
		t.Fatalf("no default file: %v %+v", err, cfg)
	}
	file := DefaultFile(env)
	os.MkdirAll(filepath.Dir(file), 0o700)
	os.WriteFile(file, []byte("parallelism: 7\ndata_dir: data\n"), 0o600)
	cfg, err = Load("", env)
	if err != nil || cfg.Parallelism != 7 || cfg.DataDir != filepath.Join(xdg, "ordo", "data") {
		t.Fatalf("the default file was not read: %v %+v", err, cfg)
	}
	// A named file wins, and must exist.
	other := filepath.Join(home, "other.yaml")
	os.WriteFile(other, []byte("parallelism: 3\n"), 0o600)
	if cfg, err = Load("", envOf("HOME", home, "XDG_CONFIG_HOME", xdg, EnvConfig, other)); err != nil || cfg.Parallelism != 3 {
		t.Errorf("ORDO_CONFIG: %v", err)
	}
	if _, err := Load(filepath.Join(home, "missing.yaml"), env); keyOf(t, err) != "config" {
		t.Errorf("a named missing file: %v", err)
	}
	if f, named := File("", env); f != file || named {
		t.Errorf("File = %s, %v", f, named)
	}
}

// TestDuplicateKeyNamed: a key given twice is reported by its dotted path
// and both lines, not as a YAML parser message.
func TestDuplicateKeyNamed(t *testing.T) {
	_, err := Parse([]byte("parallelism: 2\nllm:\n  model: a\n  timeout: 5s\n  model: b\n"), "/etc/ordo", envOf("HOME", "/h"))
	ce := contracts.AsError(err)
	if ce.Code != contracts.CodeInvalidConfig || ce.Details["key"] != "llm.model" || ce.Details["line"] != 5 ||
		!strings.Contains(ce.Message, "given twice, on lines 3 and 5") {
		t.Fatalf("%v %v", err, ce.Details)
	}
}

// TestEnvTokens: ORDO_HTTP_TOKENS adds tokens to http.tokens; bad entries
// are refused naming the variable, never echoing a token.
func TestEnvTokens(t *testing.T) {
	const a, b = "alice-token-0123456789", "ops-token-0123456789ab"
	file := []byte("http:\n  tokens:\n    - {name: carol, token_env: CAROL_TOKEN, role: user}\n")
	cfg, err := Parse(file, "/etc/ordo", envOf("HOME", "/h", EnvHTTPTokens, "alice:user:"+a+"; ops:admin:"+b+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Token{{Name: "carol", TokenEnv: "CAROL_TOKEN", Role: RoleUser}, {Name: "alice", Token: a, Role: RoleUser}, {Name: "ops", Token: b, Role: RoleAdmin}}
	if len(cfg.HTTP.Tokens) != 3 || cfg.HTTP.Tokens[1] != want[1] || cfg.HTTP.Tokens[2] != want[2] {
		t.Fatalf("tokens %+v", cfg.HTTP.Tokens)
	}
	if cfg, err = Parse(nil, "/", envOf("HOME", "/h", EnvHTTPTokens, "bob::"+a)); err != nil || cfg.HTTP.Tokens[0].Role != RoleUser {
		t.Errorf("an empty role is user: %v", err)
	}
	for _, bad := range []string{
		"alice:user:short",             // too short
		"alice:root:" + a,              // unknown role
		"alice:user,admin:" + a,        // two roles
		"alice:" + a,                   // no role field
		"carol:user:" + a,              // carol has a token in the file
		"x:user:" + a + ";y::" + a,     // one token, two users
		"alice:user:" + a + ";;::" + b, // no name
	} {
		_, err := Parse(file, "/etc/ordo", envOf("HOME", "/h", EnvHTTPTokens, bad))
		ce := contracts.AsError(err)
		if ce.Code != contracts.CodeInvalidConfig || ce.Details["env"] != EnvHTTPTokens || ce.Details["key"] != "http.tokens" {
			t.Errorf("%q: %v %v", bad, err, ce.Details)
		}
		if strings.Contains(ce.Message, a) || strings.Contains(ce.Message, b) {
			t.Errorf("%q: the message holds a token: %s", bad, ce.Message)
		}
	}
}

// FuzzEnvTokens: any ORDO_HTTP_TOKENS value either gives tokens that
// validate (a name, user or admin, at least MinTokenLength) or is refused
// with CodeInvalidConfig naming the variable. Seeds are in
// testdata/fuzz/FuzzEnvTokens.
func FuzzEnvTokens(f *testing.F) {
	f.Add("alice:user:alice-token-0123456789")
	f.Fuzz(func(t *testing.T, spec string) {
		cfg, err := Parse(nil, "/etc/ordo", envOf("HOME", "/h", EnvHTTPTokens, spec))
		if err != nil {
			ce := contracts.AsError(err)
			if ce.Code != contracts.CodeInvalidConfig || ce.Details["key"] == nil {
				t.Fatalf("uncoded error or no key: %v", err)
			}
			return
		}
		for _, tok := range cfg.HTTP.Tokens {
			if strings.TrimSpace(tok.Name) == "" || (tok.Role != RoleUser && tok.Role != RoleAdmin) || len([]rune(tok.Token)) < MinTokenLength {
				t.Fatalf("token accepted: %+v", tok)
			}
		}
	})
}

// TestUnknownKeyListsKeys: a mistyped key's error lists the keys its
// mapping takes, however deep (a list entry, a map's value), so the fix is
// in the message.
func TestUnknownKeyListsKeys(t *testing.T) {
	for doc, want := range map[string]string{
		"llm:\n  modle: x\n":                                                     "config key llm.modle: unknown key (line 2); llm takes: base_url, model, api_key_env,",
		"paralelism: 3\n":                                                        "; the file takes: data_dir, store, llm, hitl, policy, parallelism,",
		"plugins:\n  - name: a\n    pth: /x\n":                                   "plugins[0] takes: name, path, sha256, args, env",
		"llm:\n  prices:\n    gpt-x:\n      inptu: 1\n":                          "llm.prices.gpt-x takes: input, output, cached",
		"budgets:\n  run:\n    tokenz: 3\n":                                      "budgets.run takes: model_calls, tokens, cost_usd, steps, wall_time",
		"upstreams:\n  - name: a\n    overrides:\n      t:\n        rsk: read\n": "takes: risk, scopes, tags, timeout_ms",
	} {
		_, err := Parse([]byte(doc), "/etc/ordo", envOf("HOME", "/h"))
		if ce := contracts.AsError(err); ce.Code != contracts.CodeInvalidConfig || !strings.Contains(ce.Message, want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}

// TestTabIndentNamed: a tab indenting a line is named as such, with its
// line, instead of yaml's "found character that cannot start any token".
func TestTabIndentNamed(t *testing.T) {
	_, err := Parse([]byte("parallelism: 2\nllm:\n\tmodel: x\n"), "/etc/ordo", envOf("HOME", "/h"))
	ce := contracts.AsError(err)
	if ce.Code != contracts.CodeInvalidConfig || ce.Details["line"] != 3 || !strings.Contains(ce.Message, "line 3 is indented with a tab") {
		t.Fatalf("%v %v", err, ce.Details)
	}
}

// TestErrorNamesItsSource: a bad value from the environment names its
// variable (it is in no file to look at), as does a bad $ORDO_CONFIG path,
// and a document that is not a mapping says the file needs one.
func TestErrorNamesItsSource(t *testing.T) {
	_, err := Parse([]byte("parallelism: 2\n"), "/etc/ordo", envOf("HOME", "/h", "ORDO_LOG_FORMAT", "xml"))
	if ce := contracts.AsError(err); ce.Details["key"] != "log.format" || ce.Details["env"] != "ORDO_LOG_FORMAT" {
		t.Errorf("a bad ORDO_LOG_FORMAT: %v %v", err, ce.Details)
	}
	_, err = Parse([]byte("log:\n  format: xml\n"), "/etc/ordo", envOf("HOME", "/h"))
	if ce := contracts.AsError(err); ce.Details["key"] != "log.format" || ce.Details["env"] != nil {
		t.Errorf("a bad log.format in the file names a variable: %v %v", err, ce.Details)
	}
	dir := t.TempDir()
	_, err = Load("", envOf("HOME", "/h", EnvConfig, dir))
	if ce := contracts.AsError(err); ce.Details["key"] != "config" || ce.Details["env"] != EnvConfig {
		t.Errorf("ORDO_CONFIG naming a directory: %v %v", err, ce.Details)
	}
	for doc, kind := range map[string]string{"- a\n- b\n": "a list", "hello\n": "a string"} {
		_, err = Parse([]byte(doc), "/etc/ordo", envOf("HOME", "/h"))
		if ce := contracts.AsError(err); ce.Details["key"] != "config" ||
			ce.Message != `config file: expected a mapping of keys such as "parallelism: 4", got `+kind+" (line 1)" {
			t.Errorf("%q: %v %v", doc, err, ce.Details)
		}
	}
}

// TestFractionForAWholeNumberRefused: yaml.v3 cuts a number with a
// fraction to fit an integer key, so `budgets.run.steps: 0.5` was 0, no
// limit at all; it is refused, from the file (at any depth, in lists and
// maps too) and from the environment, and 4.0 is still four.
func TestFractionForAWholeNumberRefused(t *testing.T) {
	for doc, key := range map[string]string{
		"budgets:\n  run:\n    steps: 0.5\n":            "budgets.run.steps",
		"budgets:\n  user_day:\n    model_calls: 2.5\n": "budgets.user_day.model_calls",
		"parallelism: 1.9\n":                            "parallelism",
		"http:\n  tokens:\n    - {name: a, token: t}\n": "",
	} {
		_, err := Parse([]byte(doc), "/etc/ordo", envOf("HOME", "/h"))
		ce := contracts.AsError(err)
		if key == "" {
			continue // a list of mappings with no number: only that it walks them
		}
		if ce.Code != contracts.CodeInvalidConfig || ce.Details["key"] != key || !strings.Contains(ce.Message, "cut to a whole number") {
			t.Errorf("%q: %v %v", doc, err, ce.Details)
		}
	}
	_, err := Parse(nil, "/etc/ordo", envOf("HOME", "/h", "ORDO_PARALLELISM", "2.5"))
	if ce := contracts.AsError(err); ce.Details["key"] != "parallelism" || ce.Details["env"] != "ORDO_PARALLELISM" {
		t.Errorf("ORDO_PARALLELISM=2.5: %v %v", err, ce.Details)
	}
	cfg, err := Parse([]byte("parallelism: 4.0\nverifier:\n  threshold: 0.5\n"), "/etc/ordo", envOf("HOME", "/h"))
	if err != nil || cfg.Parallelism != 4 || cfg.Verifier.Threshold != 0.5 {
		t.Fatalf("4.0 and a fraction where one is meant: %v %+v", err, cfg)
	}
}

// TestTildeIsHome: a path starting with ~ is under $HOME, in the file and
// in the environment (a shell leaves "--data-dir=~/x" and a quoted "~/x"
// alone); it was taken as relative, making a directory named "~".
func TestTildeIsHome(t *testing.T) {
	cfg, err := Parse([]byte("data_dir: ~/ordo-data\nplugins_dir: ~/pd\n"), "/etc/ordo", envOf("HOME", "/h"))
	if err != nil || cfg.DataDir != "/h/ordo-data" || cfg.PluginsDir != "/h/pd" {
		t.Fatalf("in the file: %v %q %q", err, cfg.DataDir, cfg.PluginsDir)
	}
	for v, want := range map[string]string{"~/dd": "/h/dd", "~": "/h"} {
		cfg, err = Parse(nil, "/etc/ordo", envOf("HOME", "/h", "ORDO_DATA_DIR", v))
		if err != nil || cfg.DataDir != want {
			t.Errorf("ORDO_DATA_DIR=%s: %v %q, want %s", v, err, cfg.DataDir, want)
		}
	}
	home := t.TempDir() // --config=~/FILE and ORDO_CONFIG=~/FILE too
	os.WriteFile(filepath.Join(home, "c.yaml"), []byte("parallelism: 9\n"), 0o600)
	if cfg, err = Load("~/c.yaml", envOf("HOME", home)); err != nil || cfg.Parallelism != 9 {
		t.Errorf("--config ~/c.yaml: %v", err)
	}
	if cfg, err = Load("", envOf("HOME", home, EnvConfig, "~/c.yaml")); err != nil || cfg.Parallelism != 9 {
		t.Errorf("ORDO_CONFIG=~/c.yaml: %v", err)
	}
	if cfg, err = Parse([]byte("data_dir: ~x/y\n"), "/etc/ordo", envOf("HOME", "/h")); err != nil || cfg.DataDir != "/etc/ordo/~x/y" {
		t.Errorf("~user is not expanded: %v %q", err, cfg.DataDir)
	}
}
