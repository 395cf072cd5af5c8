package cli

import (
	"bytes"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/host"
)

func newConfigCmd(g *globals) *cobra.Command {
	return group(&cobra.Command{
		Use:   "config",
		Short: "Check the configuration, or show it as Ordo runs with it",
		Long: `The configuration is the built-in defaults, then the file (--config, else $ORDO_CONFIG,
else ~/.config/ordo/ordo.yaml if it exists), then the ORDO_* environment variables and
the --data-dir flag. 'validate' reads it as 'ordo serve' does and says what is wrong;
'show' prints the result with every secret hidden.`,
		Example: `  ordo config validate
  ordo --config ordo.yaml config validate --json
  ordo config show
  ORDO_PARALLELISM=8 ordo config show --json | jq .parallelism`,
	}, newConfigValidateCmd(g), newConfigShowCmd(g))
}

func newConfigValidateCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the configuration as 'ordo serve' reads it; exit 2 with the coded error if it is wrong",
		Long: `Read the configuration as 'ordo serve' does — every key checked, the HTTP tokens
resolved from their variables — and print where it came from. A wrong configuration is
error 1014 naming the key (and the file or variable), exit code 2.`,
		Example: `  ordo config validate
  ordo --config ordo.yaml config validate && ordo --config ordo.yaml serve --http`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := g.load()
			if err != nil {
				return err
			}
			env, err := g.env()
			if err != nil {
				return err
			}
			if _, err := app.Tokens(cfg, env); err != nil {
				return err
			}
			file := g.configFile(env)
			if asJSON {
				return writeJSON(g.io.Out, map[string]any{"valid": true, "file": file})
			}
			if file == "" {
				file = "the built-in defaults"
			}
			_, err = fmt.Fprintf(g.io.Out, "ok: %s, with the environment's overrides, is a valid configuration\n", file)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"valid": true, "file": FILE}`)
	return cmd
}

func newConfigShowCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration as YAML, secrets hidden",
		Long: `Print the configuration Ordo runs with — defaults, file and environment merged, paths
made absolute — as YAML (or JSON with --json), keyed as in the file. Secrets are shown as
HIDDEN: HTTP tokens, the chat webhook URL, the store URL's password and the values
of plugins' and upstreams' env. A variable holding a secret (llm.api_key_env,
token_env, bearer_token_env) is named, never read out.`,
		Example: `  ordo config show
  ordo --config ordo.yaml config show > effective.yaml
  ordo config show --json | jq .store`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := g.load()
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			enc := yaml.NewEncoder(&buf)
			enc.SetIndent(2) // as the example configuration is written
			if err := enc.Encode(hideSecrets(cfg)); err != nil {
				return err
			}
			data := buf.Bytes()
			if asJSON {
				var v map[string]any // the YAML keys, not Go's field names
				if err := yaml.Unmarshal(data, &v); err != nil {
					return err
				}
				return writeJSON(g.io.Out, v)
			}
			env, err := g.env()
			if err != nil {
				return err
			}
			if file := g.configFile(env); file != "" {
				fmt.Fprintf(g.io.Out, "# defaults, %s and the environment; secrets hidden\n", file)
			} else {
				fmt.Fprintln(g.io.Out, "# defaults and the environment; secrets hidden")
			}
			_, err = g.io.Out.Write(data)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON, keyed as the YAML")
	return cmd
}

// configFile is the file the configuration was read from ("" for none).
func (g *globals) configFile(env config.Env) string {
	file, named := config.File(g.configPath, env)
	if !named {
		if _, err := os.Stat(file); err != nil {
			return ""
		}
	}
	return file
}

// hidden stands for a secret in `config show`.
const hidden = "HIDDEN"

// hideSecrets is a copy of cfg with every secret it holds replaced by
// hidden: a key added to the configuration that holds a secret must be
// added here too.
func hideSecrets(cfg *config.Config) *config.Config {
	c := *cfg
	c.Store = hideURLPassword(c.Store)
	c.LLM.BaseURL = hideURLPassword(c.LLM.BaseURL)
	if c.Bundled.Chat.WebhookURL != "" {
		c.Bundled.Chat.WebhookURL = hidden
	}
	c.HTTP.Tokens = slices.Clone(c.HTTP.Tokens)
	for i := range c.HTTP.Tokens {
		if c.HTTP.Tokens[i].Token != "" {
			c.HTTP.Tokens[i].Token = hidden
		}
	}
	c.Plugins = slices.Clone(c.Plugins)
	for i := range c.Plugins {
		c.Plugins[i].Env = hideValues(c.Plugins[i].Env)
	}
	c.Upstreams = slices.Clone(c.Upstreams)
	for i := range c.Upstreams {
		c.Upstreams[i].Env = hideValues(c.Upstreams[i].Env)
		c.Upstreams[i].URL = host.ShownURL(c.Upstreams[i].URL)
	}
	return &c
}

// hideValues keeps an env map's names and hides its values.
func hideValues(env map[string]string) map[string]string {
	if env == nil {
		return nil
	}
	out := maps.Clone(env)
	for k := range out {
		out[k] = hidden
	}
	return out
}

// hideURLPassword hides the password of a URL, in its user info or its
// query (postgres://ordo:PASSWORD@db/ordo, ...?password=PASSWORD).
func hideURLPassword(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return hidden // unparsable: it may be anything
	}
	changed := false
	if _, ok := u.User.Password(); ok {
		u.User, changed = url.UserPassword(u.User.Username(), hidden), true
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", hidden)
		u.RawQuery, changed = q.Encode(), true
	}
	if !changed {
		return s
	}
	return u.String()
}
