package cli

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
)

func newTokensCmd(g *globals) *cobra.Command {
	return group(&cobra.Command{
		Use:   "tokens",
		Short: "Make bearer tokens for 'ordo serve --http'",
		Long: `'ordo serve --http' refuses to start without a token: every HTTP client presents one
(Authorization: Bearer TOKEN), and the token's name is the user its runs belong to.
Tokens come from http.tokens in the configuration file and from $` + config.EnvHTTPTokens + `
(entries NAME:ROLE:TOKEN separated by ';', ROLE user or admin).`,
		Example: `  ordo tokens new alice
  ordo tokens new ops --admin`,
	}, newTokensNewCmd(g))
}

// tokenName is what a token's name may hold: it is a user id, and must
// fit in the NAME:ROLE:TOKEN entries of ORDO_HTTP_TOKENS.
var tokenName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

func newTokensNewCmd(g *globals) *cobra.Command {
	var admin, asJSON bool
	cmd := &cobra.Command{
		Use:   "new NAME [--admin]",
		Short: "Print a fresh random token for user NAME and how to configure it",
		Long: `Print a new bearer token (130 random bits from crypto/rand, 26 base32 characters) for the user NAME,
with the configuration lines and the environment line that give it to 'ordo serve --http'.
Nothing is written: keep the token where you keep secrets. --admin grants the admin role
(the plugin and upstream admin tools).`,
		Example: `  ordo tokens new alice
  ordo tokens new ops --admin`,
		Args: args(1, 1),
		RunE: func(_ *cobra.Command, a []string) error {
			name := a[0]
			if !tokenName.MatchString(name) {
				return contracts.Errorf(contracts.CodeInvalidInput, "token name %q: a user id of letters, digits, '.', '_', '@' and '-' (at most 64)", name).
					With("field", "name")
			}
			role := config.RoleUser
			if admin {
				role = config.RoleAdmin
			}
			token := rand.Text() // 130 random bits in base32: never a ':' or ';'
			variable := "ORDO_TOKEN_" + strings.ToUpper(strings.NewReplacer(".", "_", "@", "_", "-", "_").Replace(name))
			if asJSON {
				return writeJSON(g.io.Out, map[string]any{"name": name, "role": role, "token": token, "token_env": variable,
					"env_entry": name + ":" + role + ":" + token})
			}
			_, err := fmt.Fprintf(g.io.Out, `token for %[1]s (role %[2]s); it is shown only now:
%[3]s

Either in the configuration file, the token in a variable of the server's environment:
http:
  tokens:
    - name: %[1]s
      token_env: %[4]s
      role: %[2]s
export %[4]s=%[3]s

or in the environment alone (entries separated by ';'):
export %[5]s='%[1]s:%[2]s:%[3]s'

A client sends the header: Authorization: Bearer %[3]s
`, name, role, token, variable, config.EnvHTTPTokens)
			return err
		},
	}
	cmd.Flags().BoolVar(&admin, "admin", false, "grant the admin role (plugin and upstream admin tools)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"name", "role", "token", "token_env", "env_entry"}`)
	return cmd
}
