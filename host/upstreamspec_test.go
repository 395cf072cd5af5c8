package host

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/internal/syncbuf"
)

func TestUpstreamSpecCheck(t *testing.T) {
	ok := UpstreamSpec{Name: "fs", Command: []string{"npx", "-y", "x"}}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for field, s := range map[string]UpstreamSpec{
		"name":                      {Name: "Bad.Name", Command: []string{"x"}},
		"command":                   {Name: "a"},
		"url":                       {Name: "a", URL: "ftp://x"},
		"bearer_token":              {Name: "a", Command: []string{"x"}, BearerToken: "t"},
		"env":                       {Name: "a", Command: []string{"x"}, Env: map[string]string{"A=B": "c"}},
		"poll_interval":             {Name: "a", Command: []string{"x"}, PollInterval: -1},
		"overrides.read.risk":       {Name: "a", Command: []string{"x"}, Overrides: map[string]ToolOverride{"read": {Risk: "huge"}}},
		"overrides.read.tags":       {Name: "a", Command: []string{"x"}, Overrides: map[string]ToolOverride{"read": {Tags: []string{"fun"}}}},
		"overrides.read.scopes":     {Name: "a", Command: []string{"x"}, Overrides: map[string]ToolOverride{"read": {Scopes: []string{" "}}}},
		"overrides.w.timeout_ms":    {Name: "a", Command: []string{"x"}, Overrides: map[string]ToolOverride{"w": {TimeoutMS: -5}}},
		"bearer_token/line break":   {Name: "a", URL: "http://h/mcp", BearerToken: "a\nb"},
		"url/credentials":           {Name: "a", URL: "https://ordo:s3cret@h/mcp"},
		"url/credentials, ftp":      {Name: "a", URL: "ftp://ordo:s3cret@h/mcp"},
		"url/credentials, no host":  {Name: "a", URL: "http://ordo:s3cret@/mcp"},
		"url/unparsable":            {Name: "a", URL: "http://ordo:s3cret@h:port/mcp"},
		"overrides.w.secret_fields": {Name: "a", Command: []string{"x"}, Overrides: map[string]ToolOverride{"w": {SecretFields: []string{""}}}},
		"url_secret/no placeholder": {Name: "a", URL: "https://h/mcp", URLSecret: "s3cret"},
		"url_secret/not given":      {Name: "a", URL: "https://h/s/{secret}/mcp"},
		"url_secret/stdio":          {Name: "a", Command: []string{"x"}, URLSecret: "s3cret"},
		"url/placeholder twice":     {Name: "a", URL: "https://h/{secret}/{secret}", URLSecret: "s3cret"},
		"url/token in a bad url":    {Name: "a", URL: "ftp://h/s/Tk3nS3cretPath0123456/mcp"},
	} {
		err := s.Check()
		want := strings.Split(field, "/")[0]
		if ce := contracts.AsError(err); ce == nil || ce.Code != contracts.CodeInvalidInput || ce.Details["field"] != want {
			t.Errorf("%s: %v", field, err)
		}
		if err != nil && strings.Contains(strings.ToLower(err.Error()), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", field, err)
		}
	}
}

// A host built without an opener refuses upstreams with a coded error
// instead of mounting something it cannot speak to.
func TestUpstreamsNeedAnOpener(t *testing.T) {
	spec := UpstreamSpec{Name: "calc", URL: "http://127.0.0.1:1/mcp"}
	if _, err := New(WithDataDir(t.TempDir()), WithUpstreams(spec)); contracts.CodeOf(err) != contracts.CodeInvalidConfig {
		t.Fatalf("New with upstreams and no opener: %v", err)
	}
	h, err := New(WithDataDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.AddUpstream(t.Context(), spec); contracts.CodeOf(err) != contracts.CodePluginRefused {
		t.Fatalf("AddUpstream without an opener: %v", err)
	}
	if len(h.Sources()) != 0 || len(h.Upstreams()) != 0 {
		t.Fatalf("a refused AddUpstream left %v %v", h.Sources(), h.Upstreams())
	}
}

// ShownURL hides what may be a key — a password, the query's values and
// key-like names, the fragment, path segments that look like keys — and
// keeps the rest, the URL secret's placeholder included.
func TestShownURL(t *testing.T) {
	for raw, want := range map[string]string{
		"":                                  "",
		"https://mcp.example.com/mcp":       "https://mcp.example.com/mcp",
		"http://127.0.0.1:8080/v1/sse/":     "http://127.0.0.1:8080/v1/sse/",
		"https://h/s/{secret}/mcp":          "https://h/s/{secret}/mcp",
		"https://h/mcp?api_key=k&v=2":       "https://h/mcp?api_key=HIDDEN&v=HIDDEN",
		"https://h/mcp?sk-Abc0123456789xyz": "https://h/mcp?HIDDEN=HIDDEN",
		"https://u:pw@h/mcp":                "https://u:HIDDEN@h/mcp",
		"https://h/mcp#tok":                 "https://h/mcp#HIDDEN",
		"https://hooks.example/services/T0001/B0002/AbCdEfGhIjKlMnOpQrStUvWx": "https://hooks.example/services/T0001/B0002/HIDDEN",
		"https://mcp.zapier.com/api/mcp/s/ODk1ZjQ2YjYtZTA0Mi00/mcp":           "https://mcp.zapier.com/api/mcp/s/HIDDEN/mcp",
		"https://h/u/550e8400-e29b-41d4-a716-446655440000/mcp":                "https://h/u/HIDDEN/mcp",
		"https://h/modelcontextprotocol-servers/streamable-http":              "https://h/modelcontextprotocol-servers/streamable-http",
		"https://h/a%2Fb/K3y%2F0123456789abcdef":                              "https://h/a%2Fb/HIDDEN",
		"http://h:port/mcp":                                                   HiddenURLPart,
		"mailto:someone@example.com":                                          HiddenURLPart,
	} {
		if got := ShownURL(raw); got != want {
			t.Errorf("ShownURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzShownURL: whatever the URL, what ShownURL shows parses, has no path
// segment or query name that looks like a key, and no query value,
// fragment or password but HIDDEN.
func FuzzShownURL(f *testing.F) {
	f.Add("https://h/s/Tk3nS3cretPath0123456/mcp?api_key=k#f")
	f.Add("http://u:p@h/%7Bsecret%7D/a%2Fb;c?x&y=1")
	f.Fuzz(func(t *testing.T, raw string) {
		out := ShownURL(raw)
		if out == "" || out == HiddenURLPart {
			return
		}
		u, err := url.Parse(out)
		if err != nil {
			t.Fatalf("%q shows %q, unparsable: %v", raw, out, err)
		}
		for _, seg := range strings.Split(u.EscapedPath(), "/") {
			if p, _ := url.PathUnescape(seg); TokenLike(p) {
				t.Fatalf("%q shows %q: segment %q", raw, out, p)
			}
		}
		for k, vs := range u.Query() {
			if TokenLike(k) || slices.ContainsFunc(vs, func(v string) bool { return v != HiddenURLPart }) {
				t.Fatalf("%q shows %q: query %q=%q", raw, out, k, vs)
			}
		}
		if pw, ok := u.User.Password(); (ok && pw != HiddenURLPart) || (u.Fragment != "" && u.Fragment != HiddenURLPart) {
			t.Fatalf("%q shows %q", raw, out)
		}
	})
}

// A configured value shorter than contracts.MinConcealed is not hidden
// where repeated: adding a plugin or an upstream that has one warns, naming
// its key and never its value (absolute paths are no secrets).
func TestShortSecretsWarned(t *testing.T) {
	var logs syncbuf.Buffer
	h := newHost(t, WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	env := map[string]string{"PIN": "q7z", "API_KEY": "long-enough-key", "ROOT": "/x", "EMPTY": "", "ROGUE_SERVICE": "pinny"}
	if err := h.AddPlugin(t.Context(), PluginSpec{Name: "pinny", Path: roguePluginBin, Env: env}); err != nil {
		t.Fatal(err)
	}
	// No opener: refused after the check, warned all the same.
	h.AddUpstream(t.Context(), UpstreamSpec{Name: "u", URL: "https://h/s/{secret}/mcp", URLSecret: "k9!", BearerToken: "long-enough-token", Env: env})
	var warned []string
	for line := range strings.Lines(logs.String()) {
		var rec struct {
			Msg, Plugin, Upstream string
			Keys                  []string
		}
		if json.Unmarshal([]byte(line), &rec) == nil && strings.Contains(rec.Msg, "too short") {
			warned = append(warned, rec.Plugin+rec.Upstream+": "+strings.Join(rec.Keys, " "))
		}
	}
	if want := []string{"pinny: env.PIN", "u: env.PIN url_secret"}; !slices.Equal(warned, want) {
		t.Fatalf("warned %q, want %q\n%s", warned, want, logs.String())
	}
	if strings.Contains(logs.String(), "q7z") || strings.Contains(logs.String(), "k9!") {
		t.Fatalf("a value is logged:\n%s", logs.String())
	}
}

// TestAnswerSecrets: what a tool answer from an upstream has hidden is the
// URL's keys — key-like values, values of parameters named as credentials,
// the URL secret, the bearer token — not every query value ShownURL hides
// in case: format=json and region=europe are data an answer may hold.
func TestAnswerSecrets(t *testing.T) {
	spec := UpstreamSpec{Name: "u", URL: "https://api.example/s/{secret}/mcp?format=json&region=europe&api_key=k3y-value&sig=AbCdEf0123456789xyz",
		URLSecret: "url-secret-value", BearerToken: "bearer-token-value"}
	answer, all := spec.AnswerSecrets(), spec.Secrets()
	for _, v := range []string{"k3y-value", "AbCdEf0123456789xyz", "url-secret-value", "bearer-token-value"} {
		if !slices.Contains(answer, v) || !slices.Contains(all, v) {
			t.Errorf("%q: hidden in answers %v, in errors %v", v, slices.Contains(answer, v), slices.Contains(all, v))
		}
	}
	for _, v := range []string{"json", "europe"} {
		if slices.Contains(answer, v) || !slices.Contains(all, v) {
			t.Errorf("%q: hidden in answers %v (want false), in errors %v (want true)", v, slices.Contains(answer, v), slices.Contains(all, v))
		}
	}
}
