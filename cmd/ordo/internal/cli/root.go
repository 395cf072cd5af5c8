package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"runtime/debug"
	"slices"

	"github.com/spf13/cobra"

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
	root := newRoot(s)
	root.SetArgs(args)
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	err := root.ExecuteContext(ctx)
	code := exitCode(err)
	var ex *exitError
	if err != nil && !errors.As(err, &ex) {
		printError(s.Err, err)
	}
	return code
}

// globals are the flags every subcommand shares.
type globals struct {
	configPath string
	// store is --store: the run store, over the store key and ORDO_STORE.
	store string
	root  *cobra.Command
	io    IO
	// logLevel is the level when log.level is unset: warn for one-shot
	// commands, whose output is for people; serve sets info.
	logLevel slog.Level
}

func newRoot(s IO) *cobra.Command {
	g := &globals{io: s, logLevel: slog.LevelWarn}
	root := &cobra.Command{
		Use:   "ordo",
		Short: "Ordo: a Plan-then-Execute tool-using agent, served over MCP",
		Long: `Ordo turns a goal (or a plan you supply) into a validated JSON action plan, checks it
against policy, asks a person where policy or configuration says so, and executes it with
code: tools are called by Ordo, never by the model, and every step is recorded.`,
		Example: `  ordo run --plan examples/first-run.plan.json --yes
  ordo serve                       # MCP over stdio, for an IDE or assistant
  ordo serve --http 127.0.0.1:7411 # MCP over streamable HTTP
  ordo runs list`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.configPath, "config", "", "configuration file (default: $ORDO_CONFIG, else built-in defaults)")
	root.PersistentFlags().StringVar(&g.store, "store", "", `run store: "embedded" or a Postgres URL (over the store key and $ORDO_STORE; never logged)`)
	g.root = root
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	root.AddCommand(
		newRunCmd(g),
		newServeCmd(g),
		newRunsCmd(g),
		newMemoryCmd(g),
		newToolsCmd(g),
		newPluginsCmd(g),
		newMigrateCmd(g),
		newVersionCmd(g),
	)
	return root
}

// load reads the configuration and builds the logger it describes.
func (g *globals) load() (*config.Config, *slog.Logger, error) {
	env, err := g.env()
	if err != nil {
		return nil, nil, err
	}
	cfg, err := config.Load(g.configPath, env)
	if err != nil {
		if ce := contracts.AsError(err); g.store != "" && ce.Details["key"] == "store" {
			ce.With("flag", "--store")
		}
		return nil, nil, err
	}
	return cfg, newLogger(cfg.Log, g.logLevel, g.io.Err), nil
}

// env is the environment the configuration is read with: --store stands
// in for ORDO_STORE, so it overrides the file's store key the same way
// and is validated (never echoed) like it.
func (g *globals) env() (config.Env, error) {
	if !g.root.PersistentFlags().Changed("store") {
		return g.io.Env, nil
	}
	if g.store == "" {
		return nil, usageError(errors.New(`--store needs a value: "embedded" or a Postgres URL`))
	}
	return func(key string) (string, bool) {
		if key == storeEnv {
			return g.store, true
		}
		return g.io.Env(key)
	}, nil
}

// storeEnv is the variable --store overrides.
const storeEnv = "ORDO_STORE"

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
		fmt.Fprintf(w, "ordo: %v\nRun 'ordo --help' for usage.\n", ue.err)
		return
	}
	fmt.Fprintf(w, "ordo: error %d (%s): %s\n", ce.Code, ce.Code.Category(), ce.Message)
	for _, k := range slices.Sorted(maps.Keys(ce.Details)) {
		fmt.Fprintf(w, "  %s: %v\n", k, ce.Details[k])
	}
}
