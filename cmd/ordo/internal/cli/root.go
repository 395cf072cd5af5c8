package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/contracts"
)

// Version is set at build time: -ldflags "-X github.com/ordo-run/ordo/cmd/ordo/internal/cli.Version=v1.2.3".
var Version = ""

// IO is where a command reads and writes, and how it sees the environment.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	Env      config.Env
}

// Main runs the ordo command with args and returns the process exit code.
func Main(ctx context.Context, args []string, s IO) int {
	root := newRoot(s, args...)
	root.SetArgs(args)
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	cmd, err := root.ExecuteContextC(ctx)
	code := exitCode(err)
	var ex *exitError
	if err != nil && !errors.As(err, &ex) {
		printError(s.Err, err)
	}
	if ue := (*usageErr)(nil); errors.As(err, &ue) && cmd != nil {
		help := cmd.CommandPath()
		if ue.help != "" {
			help = ue.help
		}
		fmt.Fprintf(s.Err, "Run '%s --help' for usage.\n", help)
	}
	return code
}

// globals are the flags every subcommand shares.
type globals struct {
	configPath string
	// dataDir is --data-dir (every command); store is --store (the
	// commands that open the run store: run, serve, runs, migrate);
	// timezone and locale are the user's (run, serve, runs).
	dataDir, store, timezone, locale override
	io                               IO
	// logLevel is the level when log.level is unset: warn for one-shot
	// commands, whose output is for people; serve sets info.
	logLevel slog.Level
	// args is the command line, for suggestFlag.
	args []string
}

// override is a flag that stands in for an environment variable, so it
// beats the file's key the same way the variable does and is validated
// (never echoed) like it. It remembers whether it was given, so an empty
// value is refused rather than ignored.
type override struct {
	flag, env, key, want string
	value                string
	set                  bool
}

func (o *override) String() string     { return o.value }
func (o *override) Set(v string) error { o.value, o.set = v, true; return nil }
func (o *override) Type() string       { return "string" }

func newRoot(s IO, args ...string) *cobra.Command {
	g := &globals{io: s, logLevel: slog.LevelWarn, args: args,
		dataDir:  override{flag: "data-dir", env: "ORDO_DATA_DIR", key: "data_dir", want: "a directory"},
		store:    override{flag: "store", env: "ORDO_STORE", key: "store", want: `"embedded" or a Postgres URL`},
		timezone: override{flag: "timezone", env: "ORDO_TIMEZONE", key: "timezone", want: "an IANA timezone such as Asia/Seoul"},
		locale:   override{flag: "locale", env: "ORDO_LOCALE", key: "locale", want: "a language tag such as ko-KR"},
	}
	root := &cobra.Command{
		Use:   "ordo",
		Short: "Ordo: a Plan-then-Execute tool-using agent, served over MCP",
		Long: `Ordo turns a goal (or a plan you supply) into a validated JSON action plan, checks it
against policy, asks a person where policy or configuration says so, and executes it with
code: tools are called by Ordo, never by the model, and every step is recorded.`,
		Example: `  ordo run --plan examples/first-run.plan.json --yes
  ordo serve                       # MCP over stdio, for an IDE or assistant
  ordo serve --http 127.0.0.1:7411 # MCP over streamable HTTP
  ordo runs list
  ordo --data-dir /tmp/ordo runs list`,
		Version:       readBuild().line(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n") // --version prints what `ordo version` does
	root.PersistentFlags().StringVar(&g.configPath, "config", "", "configuration file (default: $ORDO_CONFIG, else $XDG_CONFIG_HOME/ordo/ordo.yaml or ~/.config/ordo/ordo.yaml if it exists)")
	root.PersistentFlags().Var(&g.dataDir, "data-dir", "data directory: runs, plugin data, plugins.d (over the data_dir key and $ORDO_DATA_DIR; default $XDG_DATA_HOME/ordo or ~/.local/share/ordo)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(suggestFlag(c, err, g.args)) })
	stored := []*cobra.Command{newRunCmd(g), newServeCmd(g), newRunsCmd(g), newMigrateCmd(g), newSessionsCmd(g)}
	for _, c := range stored {
		c.PersistentFlags().Var(&g.store, "store", `run store: "embedded" or a Postgres URL (over the store key and $ORDO_STORE; never logged)`)
		if c.Name() != "migrate" && c.Name() != "sessions" {
			c.PersistentFlags().Var(&g.timezone, "timezone", "the user's timezone, e.g. Asia/Seoul: dates the models resolve (over the timezone key and $ORDO_TIMEZONE; default UTC)")
			c.PersistentFlags().Var(&g.locale, "locale", "the user's language, e.g. ko-KR: the answer's wording (over the locale key and $ORDO_LOCALE)")
		}
	}
	root.AddCommand(stored...)
	root.AddCommand(
		newMemoryCmd(g),
		newTemplatesCmd(g),
		newToolsCmd(g),
		newPluginsCmd(g),
		newTokensCmd(g),
		newConfigCmd(g),
		newVersionCmd(g),
	)
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	if help, _, err := root.Find([]string{"help"}); err == nil && help != root {
		// 'ordo help srve' is refused as 'ordo srve' is (cobra printed the
		// root's help and exited 0).
		help.Run = nil
		help.RunE = func(_ *cobra.Command, a []string) error {
			target, rest, _ := root.Find(a)
			if len(rest) > 0 && target.Args != nil && target.HasSubCommands() {
				if err := target.Args(target, rest); err != nil {
					return err
				}
			}
			return target.Help()
		}
	}
	refuseUnknown(root)
	return root
}

// refuseUnknown makes every command that only holds subcommands refuse a
// word naming none of them as a usage error with cobra's suggestions: left
// to cobra, 'ordo srve' was an internal error (9001, exit 1) and
// 'ordo runs lst' printed the group's help and exited 0.
func refuseUnknown(cmd *cobra.Command) {
	if cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.SuggestionsMinimumDistance = 2
		cmd.Args = func(c *cobra.Command, a []string) error {
			if len(a) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", a[0], c.CommandPath())
			if s := c.SuggestionsFor(a[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return &usageErr{err: errors.New(msg), help: c.CommandPath()}
		}
		cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	}
	for _, c := range cmd.Commands() {
		refuseUnknown(c)
	}
}

// suggestFlag adds to pflag's "unknown flag: --NAME" the command's flags
// that NAME starts, or that start NAME (--plann: --plan); and the same to
// its "unknown shorthand flag: 'e' in -es" for a long flag typed with one
// dash, as Go's flag package takes it (-yes: pflag read -y, then -e), its
// NAME the word of args that the rest it names ends.
func suggestFlag(cmd *cobra.Command, err error, args []string) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if _, rest, short := strings.Cut(err.Error(), "' in -"); !ok && short {
		for _, a := range args {
			if word, one := strings.CutPrefix(a, "-"); one && len(word) > 1 && !strings.HasPrefix(word, "-") && strings.HasSuffix(word, rest) {
				name, ok = word, true
				break
			}
		}
	}
	if !ok || name == "" {
		return err
	}
	var near []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && (strings.HasPrefix(f.Name, name) || strings.HasPrefix(name, f.Name)) {
			near = append(near, "--"+f.Name)
		}
	})
	if len(near) == 0 {
		return err
	}
	return fmt.Errorf("%w; did you mean %s?", err, strings.Join(near, " or "))
}

// group is cmd, which only holds subcommands, with subs added.
func group(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.AddCommand(subs...)
	return cmd
}

// load reads the configuration and builds the logger it describes.
func (g *globals) load() (*config.Config, *slog.Logger, error) {
	env, err := g.env()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := config.Load(g.configPath, env)
	if err != nil {
		ce := contracts.AsError(err)
		for _, o := range g.overrides() {
			if ce.Details["key"] == o.key {
				ce = ce.With("flag", "--"+o.flag)
				delete(ce.Details, "env") // the flag stood in for the variable
				return nil, nil, ce
			}
		}
		return nil, nil, err
	}
	return cfg, newLogger(cfg.Log, g.logLevel, g.io.Err), nil
}

// overrides are the override flags given.
func (g *globals) overrides() []*override {
	var out []*override
	for _, o := range []*override{&g.dataDir, &g.store, &g.timezone, &g.locale} {
		if o.set {
			out = append(out, o)
		}
	}
	return out
}

// env is the environment the configuration is read with: the override
// flags given stand in for their variables.
func (g *globals) env() (config.Env, error) {
	given := g.overrides()
	if len(given) == 0 {
		return g.io.Env, nil
	}
	vars := map[string]string{}
	for _, o := range given {
		if o.value == "" {
			return nil, usageError(fmt.Errorf("--%s needs a value: %s", o.flag, o.want))
		}
		vars[o.env] = o.value
	}
	return func(key string) (string, bool) {
		if v, ok := vars[key]; ok {
			return v, true
		}
		return g.io.Env(key)
	}, nil
}

// newLogger writes to w at the configured level (def when unset): text on
// a terminal, JSON otherwise (or as configured).
func newLogger(c config.Log, def slog.Level, w io.Writer) *slog.Logger {
	level := def
	if c.Level != "" {
		_ = level.UnmarshalText([]byte(c.Level))
	}
	opts := &slog.HandlerOptions{Level: level}
	text := c.Format == "text" || (c.Format == "auto" && isTerminal(w))
	if text {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// version is the build's version: the ldflags value, else the module
// version or VCS revision Go recorded.
func version() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return "dev"
}

// printError writes a coded error with its details to w.
func printError(w io.Writer, err error) {
	ce := contracts.AsError(err)
	var ue *usageErr
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "ordo: %v\n", ue.err) // Main adds the command's --help
		return
	}
	fmt.Fprintf(w, "ordo: error %d (%s): %s\n", ce.Code, ce.Code.Category(), ce.Message)
	for _, k := range slices.Sorted(maps.Keys(ce.Details)) {
		printDetail(w, k, ce.Details[k])
	}
	if ce.Code == contracts.CodeNoLLM {
		fmt.Fprint(w, noModelHelp)
	}
}

// printDetail writes one detail of an error: every schema violation on a
// line of its own ("/actions/0/intent: value must be one of …"), a
// scalar as it is, anything else as JSON (%v printed Go structs).
func printDetail(w io.Writer, k string, v any) {
	switch v := v.(type) {
	case []contracts.Violation:
		fmt.Fprintf(w, "  %s:\n", k)
		for _, x := range v {
			where := x.InstanceLocation
			if where == "" {
				where = "(the whole value)"
			}
			fmt.Fprintf(w, "    %s: %s\n", where, x.Message)
		}
		return
	case string, bool, int, int64, float64, contracts.Code, error, fmt.Stringer:
	default:
		if b, err := json.Marshal(v); err == nil {
			fmt.Fprintf(w, "  %s: %s\n", k, b)
			return
		}
	}
	fmt.Fprintf(w, "  %s: %v\n", k, v)
}

// noModelHelp says how to configure a model, and how to do without one.
const noModelHelp = `To plan with a model, give Ordo an OpenAI-compatible endpoint:
  export OPENAI_API_KEY=sk-...      # the key (llm.api_key_env names another variable)
  export ORDO_LLM_MODEL=gpt-4.1-mini
  # a local server instead: export ORDO_LLM_BASE_URL=http://127.0.0.1:11434/v1 ORDO_LLM_MODEL=qwen2.5:7b
Without a model, 'ordo run --plan FILE' runs a plan you wrote (examples/first-run.plan.json).
`
