package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/config"
	"github.com/ordo-run/ordo/cmd/ordo/internal/console"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory"
	"github.com/ordo-run/ordo/memory/patterns"
)

// Shell completion ('ordo completion bash|zsh|fish|powershell', cobra's
// own command) asks these for the names a command takes. They read what
// the command would read, with the same --config and --store, and offer
// nothing when that fails: a completion never prints an error.

type completion = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

const noFiles = cobra.ShellCompDirectiveNoFileComp

// completeRunID completes the one RUN_ID argument of a command.
func (g *globals) completeRunID(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	return g.completeRunIDs(cmd, args, prefix)
}

// completeRunIDs completes run ids not given yet, newest first, each
// described by its status and goal.
func (g *globals) completeRunIDs(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	var out []string
	_ = g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
		rows, err := st.List(cmd.Context(), memory.Filter{})
		for _, r := range rows {
			if strings.HasPrefix(r.ID, prefix) && !slices.Contains(args, r.ID) {
				out = append(out, r.ID+"\t"+string(r.Status)+": "+console.Clip(r.Goal, 50))
			}
		}
		return err
	})
	return out, noFiles
}

// completeAction completes `runs fork RUN_ID --from`: the actions of the
// run's current plan.
func (g *globals) completeAction(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) == 0 {
		return nil, noFiles
	}
	var out []string
	_ = g.withStore(cmd.Context(), func(_ *config.Config, st memory.Checkpointer) error {
		run, err := st.Load(cmd.Context(), args[0])
		if err != nil || len(run.Plans) == 0 {
			return err
		}
		for _, a := range run.Plans[len(run.Plans)-1].Plan.Actions {
			if strings.HasPrefix(a.ID, prefix) {
				out = append(out, a.ID+"\t"+a.Tool)
			}
		}
		return nil
	})
	return out, noFiles
}

// completeTool completes the catalog's tool names (plugins are started,
// as for 'ordo tools list').
func (g *globals) completeTool(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	var out []string
	_ = g.withApp(cmd, func(a *app.App) error {
		for _, t := range a.Host.List() {
			if strings.HasPrefix(t.Name(), prefix) {
				out = append(out, t.Name()+"\t"+console.Clip(t.Contract.Description, 50))
			}
		}
		return nil
	})
	return out, noFiles
}

// completePlugin completes what 'ordo plugins remove' removes: the
// plugins installed in plugins_dir and the upstreams of the config file.
func (g *globals) completePlugin(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, noFiles
	}
	cfg, _, err := g.load()
	if err != nil {
		return nil, noFiles
	}
	var names []string
	entries, _ := os.ReadDir(cfg.PluginsDir)
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || filepath.Ext(name) == ".sha256" || filepath.Ext(name) == ".json" {
			continue
		}
		names = append(names, strings.TrimPrefix(name, "ordo-plugin-"))
	}
	for _, u := range cfg.Upstreams {
		names = append(names, u.Name)
	}
	return withPrefix(names, prefix), noFiles
}

// completeTemplate completes the names of the user's saved templates.
func (g *globals) completeTemplate(user *string) completion {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		var names []string
		_ = g.withPatterns(func(m *patterns.Memory) error {
			rs, err := m.List(cmd.Context(), *user, patterns.NSWorkflow)
			for _, r := range rs {
				names = append(names, r.Name)
			}
			return err
		})
		return withPrefix(names, prefix), noFiles
	}
}

// completeWords completes a flag that takes one of a fixed set of words.
func completeWords(words ...string) completion {
	return func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(words, prefix), noFiles
	}
}

// runStatuses are the values of `runs list --status`.
var runStatuses = []string{string(contracts.RunPending), string(contracts.RunReady), string(contracts.RunRunning),
	string(contracts.RunInterrupted), string(contracts.RunCompleted), string(contracts.RunFailed),
	string(contracts.RunRejected), string(contracts.RunCancelled)}

// namespaces are the values of the memory commands' --namespace.
func namespaces() []string {
	out := []string{"all"}
	for _, ns := range patterns.Namespaces {
		out = append(out, string(ns))
	}
	return out
}

func withPrefix(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if strings.HasPrefix(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}
