package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/cmd/ordo/internal/console"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/host"
)

func newPluginsCmd(g *globals) *cobra.Command {
	return group(&cobra.Command{
		Use:   "plugins",
		Short: "List, add, remove and start writing plugins",
		Long: `Plugins are executables speaking Ordo's plugin protocol (docs/plugins.md). 'add' checks
that a plugin starts and that its contracts are valid, then installs it into plugins_dir with
its SHA-256 beside it; a running 'ordo serve' picks it up (and drops it on 'remove') without
a restart.`,
		Example: `  ordo plugins list
  ordo plugins new shout        # a plugin module to start from
  ordo plugins add ./bin/plugin-hello --name hello
  ordo plugins remove hello`,
	}, newPluginsListCmd(g), newPluginsAddCmd(g), newPluginsRemoveCmd(g), newPluginsNewCmd(g))
}

func newPluginsListCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "Start every configured plugin and show its state and tools",
		Example: "  ordo plugins list\n  ordo plugins list --json",
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withApp(cmd, func(a *app.App) error {
				ps := a.Host.Sources()
				if asJSON {
					return writeJSON(g.io.Out, ps)
				}
				tw := tabwriter.NewWriter(g.io.Out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tORIGIN\tSTATE\tTOOLS\tERROR")
				for _, p := range ps {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Origin, p.State, strings.Join(p.Tools, ","), console.Clip(p.Error, 60))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newPluginsAddCmd(g *globals) *cobra.Command {
	var name string
	var force bool
	var up upstreamFlags
	cmd := &cobra.Command{
		Use:   "add PATH [--name NAME] [--force] | --mcp 'CMD ARGS' [--name NAME] [--save] | --mcp-url URL [--name NAME] [--save]",
		Short: "Check a plugin binary and install it into plugins_dir, or mount an upstream MCP server",
		Long: `With PATH: start the plugin once (handshake, valid contracts), then install it into
plugins_dir with its SHA-256 beside it; a running 'ordo serve' picks it up.

With --mcp (a stdio command, split like a shell would, run without one) or --mcp-url (a
streamable-HTTP endpoint): connect to the upstream MCP server, list the tools it would add
(NAME.tool, with the risk read from their annotations), and print its 'upstreams:' entry.
--save appends that entry to the configuration file (--config, else $ORDO_CONFIG, else
~/.config/ordo/ordo.yaml, created if missing); a running 'ordo serve' reading that file
mounts it without a restart. NAME defaults to the package or program the command runs
(npx -y @modelcontextprotocol/server-everything: server-everything), or the URL's host.`,
		Example: `  ordo plugins add ./bin/plugin-hello --name hello
  ordo plugins add ~/Downloads/ordo-plugin-weather --force
  ordo plugins add --mcp 'npx -y @modelcontextprotocol/server-memory' --save   # name: server-memory
  ordo plugins add --mcp-url https://mcp.example.com/mcp --bearer-token-env EXAMPLE_TOKEN --name example`,
		Args: args(0, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if up.command != "" || up.url != "" {
				if len(a) != 0 {
					return usageError(fmt.Errorf("give a PATH or --mcp/--mcp-url, not both"))
				}
				return g.addUpstream(cmd, name, up)
			}
			if len(a) != 1 {
				return usageError(fmt.Errorf("plugins add needs a PATH, --mcp or --mcp-url"))
			}
			cfg, log, err := g.load()
			if err != nil {
				return err
			}
			src := a[0]
			derived := name == ""
			if derived {
				name = strings.TrimPrefix(filepath.Base(src), "ordo-plugin-")
			}
			if err := claimable(cfg, name); err != nil {
				if derived { // the name is the file's: say so, and how to give another
					ce := contracts.AsError(err)
					return contracts.Errorf(ce.Code, "%s (the name comes from the file %s; --name NAME gives another)", ce.Message, src).
						WithDetails(ce.Details)
				}
				return err
			}
			dst, installed := installedPlugin(cfg.PluginsDir, name)
			if installed && !force {
				return contracts.Errorf(contracts.CodeInvalidInput, "plugin %s is already installed at %s; nothing changed (--force replaces it)", name, dst).
					With("field", "name").With("path", dst)
			}
			// Prove it starts and describes valid contracts before installing,
			// pinned to the bytes it started from.
			h, err := host.New(host.WithLogger(log.With("component", "host")), host.WithDataDir(cfg.DataDir))
			if err != nil {
				return err
			}
			defer h.Close()
			if err := h.AddPlugin(cmd.Context(), host.PluginSpec{Name: name, Path: src, PinFound: true}); err != nil {
				return err
			}
			var tools []string
			var started string // the checksum of the binary that started
			for _, p := range h.Sources() {
				if p.Name == name {
					tools, started = p.Tools, p.SHA256
				}
			}
			sum, err := install(src, dst, started)
			if err != nil {
				return contracts.Errorf(contracts.CodeInvalidInput, "install %s: %w", name, err).With("field", "path")
			}
			if up.json {
				return writeJSON(g.io.Out, map[string]any{"installed": name, "path": dst, "sha256": sum, "tools": tools})
			}
			_, err = fmt.Fprintf(g.io.Out, "installed %s at %s (sha256 %s)\ntools: %s\n", name, dst, sum, strings.Join(tools, ", "))
			return err
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "plugin name (default: the file name without ordo-plugin-; upstreams: the package or program run, or the URL's host)")
	cmd.Flags().BoolVar(&force, "force", false, "replace an installed plugin of that name")
	cmd.Flags().StringVar(&up.command, "mcp", "", "an upstream MCP server's stdio command line")
	cmd.Flags().StringVar(&up.url, "mcp-url", "", "an upstream MCP server's streamable-HTTP URL")
	cmd.Flags().StringVar(&up.tokenEnv, "bearer-token-env", "", "with --mcp-url: the variable holding its bearer token")
	cmd.Flags().StringVar(&up.tokenEnv, "token-env", "", "short for --bearer-token-env")
	cmd.Flags().StringVar(&up.urlSecretEnv, "url-secret-env", "", "with --mcp-url: the variable holding the key that replaces {secret} in the URL")
	cmd.Flags().BoolVar(&up.json, "json", false, `print what was installed or mounted as JSON ({"installed", "path", "sha256", "tools"}; upstreams {"upstream", "tools", "entry", "saved_to"})`)
	cmd.Flags().BoolVar(&up.save, "save", false, "append the upstream to the configuration file (default ~/.config/ordo/ordo.yaml); a running serve mounts it")
	return cmd
}

// claimable refuses names that are invalid or belong to a bundled or
// declared plugin.
func claimable(cfg *config.Config, name string) error {
	bad := func(format string, a ...any) error {
		return contracts.Errorf(contracts.CodeInvalidInput, format, a...).With("field", "name")
	}
	probe := *cfg
	probe.Plugins = []config.Plugin{{Name: name, Path: "/probe", SHA256: strings.Repeat("0", 64)}}
	if err := probe.Validate(); err != nil {
		return bad("plugin name %q: lower-case letters, digits, - and _, and not a bundled plugin's name", name)
	}
	if i := slices.IndexFunc(cfg.Plugins, func(p config.Plugin) bool { return p.Name == name }); i >= 0 {
		return bad("plugin %s is declared in the config file (plugins[%d]); change it there", name, i)
	}
	if i := slices.IndexFunc(cfg.Upstreams, func(u config.Upstream) bool { return u.Name == name }); i >= 0 {
		return bad("%s is an upstream declared in the config file (upstreams[%d]); change it there", name, i)
	}
	return nil
}

// installedPlugin is where plugin name goes in dir: the file already
// installed for it (NAME or ordo-plugin-NAME), else dir/NAME.
func installedPlugin(dir, name string) (path string, installed bool) {
	for _, file := range []string{name, "ordo-plugin-" + name} {
		if p := filepath.Join(dir, file); fileExists(p) {
			return p, true
		}
	}
	return filepath.Join(dir, name), false
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// install copies src to dst atomically (dotfile, then rename: the host
// ignores dotfiles while a copy is in progress) and pins it (see
// writeManifests),
// refusing a copy whose checksum is not want (the binary changed since it
// was checked).
func install(src, dst, want string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp")
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(out, h), in)
	err = errors.Join(err, out.Sync(), out.Close())
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if sum != want {
		os.Remove(tmp)
		return "", fmt.Errorf("%s changed while it was being installed (sha256 %s, checked %s)", src, sum, want)
	}
	if err := writeManifests(dst, sum); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return sum, os.Rename(tmp, dst)
}

// writeManifests pins dst to sum: dst.sha256, and dst.json if the binary
// being replaced has one (the host reads it first), its env and args kept.
// A dst.json that does not parse is an error, and nothing is written.
func writeManifests(dst, sum string) error {
	raw, err := os.ReadFile(dst + ".json")
	switch {
	case err == nil:
		m, err := host.ParseManifest(raw)
		if err != nil {
			return fmt.Errorf("%s.json: %w (fix or delete it)", dst, err)
		}
		m.SHA256 = sum
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".json.tmp")
		if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, dst+".json"); err != nil {
			os.Remove(tmp)
			return err
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	return os.WriteFile(dst+".sha256", []byte(sum+"  "+filepath.Base(dst)+"\n"), 0o644)
}

func newPluginsRemoveCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:               "remove NAME",
		Short:             "Uninstall a plugin from plugins_dir, or delete an upstream's entry from the configuration file",
		Example:           "  ordo plugins remove hello\n  ordo --config ordo.yaml plugins remove memory",
		Args:              args(1, 1),
		ValidArgsFunction: g.completePlugin,
		RunE: func(cmd *cobra.Command, a []string) error {
			cfg, _, err := g.load()
			if err != nil {
				return err
			}
			name := a[0]
			if slices.ContainsFunc(cfg.Upstreams, func(u config.Upstream) bool { return u.Name == name }) {
				return g.removeUpstream(name, asJSON)
			}
			if slices.Contains(app.BundledNames, name) {
				return contracts.Errorf(contracts.CodeInvalidInput, "%s is bundled with Ordo; turn it off with bundled.%s.enabled: false", name, name).With("field", "name")
			}
			if err := claimable(cfg, name); err != nil {
				return err
			}
			removed := 0
			for _, file := range []string{name, "ordo-plugin-" + name} {
				bin := filepath.Join(cfg.PluginsDir, file)
				if _, err := os.Stat(bin); err != nil {
					continue
				}
				// The binary first: the host stops the plugin when it goes.
				for _, p := range []string{bin, bin + ".sha256", bin + ".json"} {
					if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
						return contracts.Errorf(contracts.CodeInvalidInput, "remove %s: %w", p, err).With("field", "name")
					}
				}
				removed++
			}
			if removed == 0 {
				return contracts.Errorf(contracts.CodeInvalidInput, "no plugin %s in %s", name, cfg.PluginsDir).With("field", "name")
			}
			if asJSON {
				return writeJSON(g.io.Out, map[string]any{"removed": name, "kind": "plugin", "from": cfg.PluginsDir})
			}
			_, err = fmt.Fprintf(g.io.Out, "removed %s from %s\n", name, cfg.PluginsDir)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"removed", "kind", "from"}`)
	return cmd
}
