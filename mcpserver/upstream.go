package mcpserver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
	"github.com/ordo-run/ordo/host/mcpsource"
)

// addUpstreamArgs are add_upstream's arguments: an upstream MCP server as
// an admin names it, the way `ordo plugins add --mcp|--mcp-url` does.
type addUpstreamArgs struct {
	Name           string                       `json:"name"`
	MCP            string                       `json:"mcp"`
	Command        []string                     `json:"command"`
	Env            map[string]string            `json:"env"`
	MCPURL         string                       `json:"mcp_url"`
	BearerTokenEnv string                       `json:"bearer_token_env"`
	URLSecretEnv   string                       `json:"url_secret_env"`
	PollInterval   string                       `json:"poll_interval"`
	Overrides      map[string]host.ToolOverride `json:"overrides"`
}

// spec turns the arguments into the host's spec, resolving the bearer
// token and the URL secret from the server's environment. Every problem
// is CodeInvalidInput naming the argument.
func (a addUpstreamArgs) spec(lookup func(string) (string, bool)) (host.UpstreamSpec, error) {
	bad := func(field, format string, args ...any) error {
		return contracts.Errorf(contracts.CodeInvalidInput, "add_upstream: argument %s: "+format, append([]any{field}, args...)...).
			With("field", field)
	}
	spec := host.UpstreamSpec{Name: a.Name, Command: a.Command, Env: a.Env, URL: a.MCPURL, Overrides: a.Overrides}
	given := 0
	for _, set := range []bool{a.MCP != "", len(a.Command) > 0, a.MCPURL != ""} {
		if set {
			given++
		}
	}
	if given != 1 {
		return spec, bad("mcp", "give exactly one of mcp (a command line), command (argv) or mcp_url")
	}
	if a.MCP != "" {
		argv, err := mcpsource.SplitCommand(a.MCP)
		if err != nil {
			return spec, contracts.Errorf(contracts.CodeInvalidInput, "add_upstream: argument mcp: %w", err).With("field", "mcp")
		}
		spec.Command = argv
	}
	if a.MCPURL != "" && len(a.Env) > 0 {
		return spec, bad("env", "only a stdio upstream (mcp or command) takes env")
	}
	for _, v := range []struct {
		field, name, what string
		into              *string
	}{
		{"bearer_token_env", a.BearerTokenEnv, "a bearer token", &spec.BearerToken},
		{"url_secret_env", a.URLSecretEnv, "a URL secret", &spec.URLSecret},
	} {
		if v.name == "" {
			continue
		}
		if a.MCPURL == "" {
			return spec, bad(v.field, "only an HTTP upstream (mcp_url) takes %s", v.what)
		}
		value, _ := lookup(v.name)
		if value == "" {
			return spec, bad(v.field, "the variable %s is unset or empty on the server", v.name)
		}
		*v.into = value
	}
	if a.PollInterval != "" {
		d, err := time.ParseDuration(a.PollInterval)
		if err != nil || d <= 0 {
			return spec, bad("poll_interval", "%q is not a positive duration such as 30s", a.PollInterval)
		}
		spec.PollInterval = d
	}
	if err := spec.Check(); err != nil {
		ce := contracts.AsError(err)
		switch ce.Details["field"] { // the spec's names for the arguments
		case "url":
			ce = ce.With("field", "mcp_url")
		case "url_secret":
			ce = ce.With("field", "url_secret_env")
		}
		return spec, ce
	}
	return spec, nil
}

// handleAddUpstream mounts an upstream MCP server at run time (admin).
// Like host.AddUpstream it leaves nothing running when it fails.
func (s *Server) handleAddUpstream(ctx context.Context, _ mcp.CallToolRequest, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var a addUpstreamArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	spec, err := a.spec(s.opts.LookupEnv)
	if err != nil {
		return nil, err
	}
	if err := s.opts.Admin.AddUpstream(ctx, spec); err != nil {
		return nil, err
	}
	s.log.Info("upstream added over MCP", "upstream", spec.Name, "transport", spec.Transport(), "user", identityFrom(ctx).User)
	plugins := s.opts.Admin.Sources()
	tools := []string{}
	for _, p := range plugins {
		if p.Name == spec.Name {
			tools = p.Tools
		}
	}
	return okResult(map[string]any{"added": spec.Name, "tools": tools, "plugins": plugins})
}
