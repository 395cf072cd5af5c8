package config

import (
	"slices"

	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/mcpserver"
)

// EnvHTTPTokens gives `ordo serve --http` tokens from the environment, in
// addition to http.tokens: entries NAME:ROLE:TOKEN separated by ';' or
// newlines, ROLE user, admin or empty (user), the token everything after
// the second ':' (mcpserver.ParseTokens' format). For a deployment that
// keeps every secret in the environment; `ordo tokens new` prints one.
const EnvHTTPTokens = "ORDO_HTTP_TOKENS"

// addEnvTokens appends the tokens of EnvHTTPTokens to http.tokens. The
// errors name the entry, never its token.
func (c *Config) addEnvTokens(env Env) error {
	spec, _ := env(EnvHTTPTokens)
	if spec == "" {
		return nil
	}
	toks, err := parseEnvTokens(spec)
	if err != nil {
		return err
	}
	for _, t := range toks {
		if slices.ContainsFunc(c.HTTP.Tokens, func(o Token) bool { return o.Name == t.Name }) {
			return envTokenError(t.Name, "has a token in http.tokens already; one token per user")
		}
		c.HTTP.Tokens = append(c.HTTP.Tokens, t)
	}
	return nil
}

// parseEnvTokens reads the value of EnvHTTPTokens into tokens with one
// role each. Every failure is CodeInvalidConfig with key "http.tokens"
// and env EnvHTTPTokens.
func parseEnvTokens(spec string) ([]Token, error) {
	parsed, err := mcpserver.ParseTokens(spec)
	if err != nil {
		ce := contracts.AsError(err)
		return nil, contracts.Errorf(contracts.CodeInvalidConfig, "%s: %s (entries NAME:ROLE:TOKEN separated by ';')", EnvHTTPTokens, ce.Message).
			With("key", "http.tokens").With("env", EnvHTTPTokens)
	}
	out := make([]Token, len(parsed))
	for i, p := range parsed {
		role := RoleUser
		switch {
		case len(p.Roles) > 1:
			return nil, envTokenError(p.User, "one role, user or admin")
		case len(p.Roles) == 1:
			role = p.Roles[0]
		}
		if role != RoleUser && role != RoleAdmin {
			return nil, envTokenError(p.User, "role user or admin, got %q", role)
		}
		out[i] = Token{Name: p.User, Token: p.Token, Role: role}
	}
	return out, nil
}

func envTokenError(user, format string, args ...any) error {
	return contracts.Errorf(contracts.CodeInvalidConfig, "%s: user %q: "+format, append([]any{EnvHTTPTokens, user}, args...)...).
		With("key", "http.tokens").With("env", EnvHTTPTokens)
}
