package host

import (
	"strings"
	"testing"

	"github.com/ordo-run/ordo/contracts"
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
	} {
		err := s.Check()
		want := strings.Split(field, "/")[0]
		if ce := contracts.AsError(err); ce == nil || ce.Code != contracts.CodeInvalidInput || ce.Details["field"] != want {
			t.Errorf("%s: %v", field, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
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
