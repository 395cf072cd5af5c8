package app

import (
	"context"
	"fmt"

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

// MCPServer builds the MCP server over the app's engine, store, catalog,
// recommender and plugin admin. Without a configured model it offers MCP
// sampling (the calling client's model) to plan.
func (a *App) MCPServer(version string, env config.Env) (*mcpserver.Server, error) {
	tokens, err := Tokens(a.Config, env)
	if err != nil {
		return nil, err
	}
	opts := mcpserver.Options{
		Engine:   scoped{a.Engine, a.Config.Policy},
		HasLLM:   a.LLM != nil,
		Runs:     a.Store,
		Catalog:  a.Host,
		Searcher: a.Recommender,
		Admin:    a.Host,
		// add_upstream's bearer_token_env, read where the tokens are.
		LookupEnv: env,
		Tokens:    tokens,
		Logger:    a.Log.With("component", "mcp"),
		Version:   version,
	}
	if a.Config.ExposeTools {
		opts.Gateway = &mcpserver.Gateway{Tools: a.Host, Policy: EngineConfig(a.Config).Policy, Audit: a.Store,
			Scopes: a.Config.Policy.ScopesFor} // as scoped gives the engine's runs
	}
	if a.LLM == nil {
		opts.Sampling = func(model llm.LLM) mcpserver.Engine {
			return scoped{agent.New(EngineConfig(a.Config), a.deps(model)), a.Config.Policy}
		}
	}
	return mcpserver.New(opts)
}

// Tokens resolves the configured HTTP tokens. A token whose variable is
// unset is an error naming the key, so a server never starts with a
// token nobody can present.
func Tokens(cfg *config.Config, env config.Env) ([]mcpserver.Token, error) {
	var out []mcpserver.Token
	for i, t := range cfg.HTTP.Tokens {
		secret := t.Secret(env)
		if secret == "" {
			key := fmt.Sprintf("http.tokens[%d].token_env", i)
			return nil, contracts.Errorf(contracts.CodeInvalidConfig, "config key %s: expected the variable %s to hold a token; it is unset or empty", key, t.TokenEnv).
				With("key", key)
		}
		out = append(out, mcpserver.Token{Token: secret, Identity: mcpserver.Identity{User: t.Name, Roles: []string{t.Role}}})
	}
	return out, nil
}
