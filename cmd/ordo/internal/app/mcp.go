package app

import (
	"context"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/agent/llm"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
)

// scoped gives every run the scopes policy grants its user, whatever the
// caller claimed: MCP callers are identified by their token, and their
// scopes come from configuration, not from the request.
type scoped struct {
	*agent.Engine
	policy config.Policy
}

func (s scoped) Plan(ctx context.Context, req agent.Request) (*contracts.Run, error) {
	req.Options.Scopes = s.policy.ScopesFor(req.UserID)
	return s.Engine.Plan(ctx, req)
}

func (s scoped) Run(ctx context.Context, req agent.Request) (*contracts.Run, error) {
	req.Options.Scopes = s.policy.ScopesFor(req.UserID)
	return s.Engine.Run(ctx, req)
}

// RunTemplate (MCP run_template) gives the run the caller's scopes, as Run.
func (s scoped) RunTemplate(ctx context.Context, req agent.TemplateRequest) (*contracts.Run, error) {
	req.Options.Scopes = s.policy.ScopesFor(req.UserID)
	return s.Engine.RunTemplate(ctx, req)
}

// Fork gives the new run the scopes policy grants the user who forks it
// (the MCP caller), not those of the run it forks.
func (s scoped) Fork(ctx context.Context, req agent.ForkRequest) (*contracts.Run, error) {
	return s.Engine.Fork(ctx, s.forker(req))
}

// Retry (approve {decision: retry}) is a fork: the caller's scopes too.
func (s scoped) Retry(ctx context.Context, req agent.ForkRequest) (*contracts.Run, error) {
	return s.Engine.Retry(ctx, s.forker(req))
}

// forker sets a fork's scopes to those policy grants its user.
func (s scoped) forker(req agent.ForkRequest) agent.ForkRequest {
	req.Scopes = s.policy.ScopesFor(req.UserID)
	if req.Scopes == nil {
		req.Scopes = []string{} // none granted; nil would keep the forked run's
	}
	return req
}

// MCPServer builds the MCP server over the app's engine, store, catalog,
// recommender and plugin admin. Without a configured model it offers MCP
// sampling (the calling client's model) to plan.
func (a *App) MCPServer(version string, env config.Env) (*mcpserver.Server, error) {
	tokens, err := Tokens(a.Config, env)
	if err != nil {
		return nil, err
	}
	// The stdio client acts as the local user, with the admin tools only
	// when mcp.stdio_admin turns them on.
	stdio := &mcpserver.Identity{User: "local"}
	if a.Config.MCP.StdioAdmin {
		stdio.Roles = []string{mcpserver.RoleAdmin}
	}
	opts := mcpserver.Options{
		Engine:  scoped{a.Engine, a.Config.Policy},
		HasLLM:  a.LLM != nil,
		Runs:    a.Store,
		Catalog: a.Host,
		Admin:   a.Host,
		// add_upstream's bearer_token_env, read where the tokens are.
		LookupEnv:       env,
		Tokens:          tokens,
		StdioIdentity:   stdio,
		MaxTasksPerUser: a.Config.MCP.MaxTasksPerUser,
		Logger:          a.Log.With("component", "mcp"),
		Version:         version,
		Observe:         a.Metrics.MCPOptions(),
		Public:          a.opsHandlers(),
	}
	if a.Config.ExposeTools {
		opts.Gateway = &mcpserver.Gateway{Tools: a.Host,
			Scopes: a.Config.Policy.ScopesFor} // as scoped gives the engine's runs
	}
	if a.LLM == nil {
		opts.Sampling = func(model llm.LLM) llm.LLM { return a.Metrics.LLM(model, samplingModel) }
	}
	srv, err := mcpserver.New(opts)
	if err != nil {
		return nil, err
	}
	wake := srv.RunEvent
	a.runEvents.Store(&wake)
	return srv, nil
}

// Tokens resolves the configured HTTP tokens. A token whose variable is
// unset, blank, too short or shared with another entry is an error naming
// the key, so a server never starts with a token nobody can present or
// anybody can guess.
func Tokens(cfg *config.Config, env config.Env) ([]mcpserver.Token, error) {
	secrets, err := cfg.HTTP.Secrets(env)
	if err != nil {
		return nil, err
	}
	out := make([]mcpserver.Token, len(secrets))
	for i, t := range cfg.HTTP.Tokens {
		out[i] = mcpserver.Token{Token: secrets[i], Identity: mcpserver.Identity{User: t.Name, Roles: []string{t.Role}}}
	}
	return out, nil
}
