package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/console"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/memory/patterns"
)

func newMemoryCmd(g *globals) *cobra.Command {
	return group(&cobra.Command{
		Use:   "memory",
		Short: "List, show and forget what pattern memory learned, per user",
		Long: `Pattern memory keeps, per user, the plans, tools, clarifications, approval habits and
saved templates of finished runs (docs/memory.md). These commands read and delete it
directly in <data_dir>/patterns; the user is 'local' (who 'ordo run' acts as) unless
--user names another (an MCP user is its token name).`,
		Example: `  ordo memory list
  ordo memory list --namespace workflow --user alice
  ordo memory show 3f2a...
  ordo memory forget 3f2a...
  ordo memory forget --template weekly-report
  ordo memory forget --namespace tool --all`,
	}, newMemoryListCmd(g), newMemoryShowCmd(g), newMemoryForgetCmd(g))
}

// withPatterns opens just the pattern memory (no plugins, no store) for fn.
// It works with memory.enabled false too: forgetting must always be possible.
func (g *globals) withPatterns(fn func(*patterns.Memory) error) error {
	cfg, log, err := g.load()
	if err != nil {
		return err
	}
	m, err := app.OpenPatterns(cfg, log)
	if err != nil {
		return err
	}
	return fn(m)
}

// userFlag adds --user (default: the local user of ordo run).
func userFlag(cmd *cobra.Command, user *string) {
	cmd.Flags().StringVar(user, "user", LocalUser, "whose memory (an MCP user is its token name)")
}

// namespaceFlag adds --namespace (default: all), completed in the shell.
func namespaceFlag(cmd *cobra.Command, ns *string) {
	cmd.Flags().StringVar(ns, "namespace", "all", "plan, tool, clarification, behavior, workflow or all")
	_ = cmd.RegisterFlagCompletionFunc("namespace", completeWords(namespaces()...))
}

func newMemoryListCmd(g *globals) *cobra.Command {
	var user, ns string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List a user's remembered patterns, most recently used first",
		Example: `  ordo memory list
  ordo memory list --namespace plan --json
  ordo memory list --namespace workflow   # saved templates`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			space, err := patterns.ParseNamespace(ns)
			if err != nil {
				return err
			}
			return g.withPatterns(func(m *patterns.Memory) error {
				rs, err := m.List(cmd.Context(), user, space)
				if err != nil {
					return err
				}
				if asJSON {
					if rs == nil {
						rs = []patterns.Record{}
					}
					return writeJSON(g.io.Out, rs)
				}
				return listRecords(g.io.Out, rs)
			})
		},
	}
	userFlag(cmd, &user)
	namespaceFlag(cmd, &ns)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the records as JSON")
	return cmd
}

// listRecords prints one line per record for people.
func listRecords(w io.Writer, rs []patterns.Record) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAMESPACE\tLAST USED\tSEEN\tWHAT")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.Namespace, r.LastUsed.Local().Format(time.DateTime), seen(r), console.Clip(what(r), 70))
	}
	if len(rs) == 0 {
		fmt.Fprintln(tw, "(nothing remembered)")
	}
	return tw.Flush()
}

// seen is a record's evidence: successes/failures, or a person's decisions.
func seen(r patterns.Record) string {
	switch r.Namespace {
	case patterns.NSWorkflow:
		return "-"
	case patterns.NSBehavior:
		return fmt.Sprintf("%d approved, %d other", r.Approvals, r.Edits+r.Skips+r.Rejects)
	}
	return fmt.Sprintf("%d ok, %d failed", r.Successes, r.Failures)
}

// what says what a record is about, by namespace.
func what(r patterns.Record) string {
	switch r.Namespace {
	case patterns.NSWorkflow:
		return "template " + r.Name + ": " + r.Plan.Goal
	case patterns.NSPlan:
		tools := make([]string, len(r.Plan.Actions))
		for i, a := range r.Plan.Actions {
			tools[i] = a.Tool
		}
		return r.Text + " [" + strings.Join(tools, " > ") + "]"
	case patterns.NSTool:
		s := r.Tool + ": " + r.Text
		if r.ShouldAvoid {
			s += " (avoid)"
		}
		return s
	case patterns.NSBehavior:
		return r.Tool
	}
	return r.Text
}

func newMemoryShowCmd(g *globals) *cobra.Command {
	var user string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one remembered pattern as JSON",
		Example: `  ordo memory show 3f2a9c0d1e2b3a4f5c6d7e8f
  ordo memory show wf-0123abcd... --user alice | jq .plan`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withPatterns(func(m *patterns.Memory) error {
				r, err := m.Show(cmd.Context(), user, a[0])
				if err != nil {
					return err
				}
				return writeJSON(g.io.Out, r)
			})
		},
	}
	userFlag(cmd, &user)
	return cmd
}

func newMemoryForgetCmd(g *globals) *cobra.Command {
	var user, ns, template string
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "forget [ID] [--template NAME] [--namespace NS --all]",
		Short: "Delete remembered patterns: one by id, a template by name, or a whole namespace",
		Long: `Delete one record by its id (as 'memory list' shows it), a saved template by its name,
or every record of a namespace for the user. Deleting more than one record asks for
--all, so a forgotten argument never wipes memory. An id or name that matches nothing
is an error.`,
		Example: `  ordo memory forget 3f2a9c0d1e2b3a4f5c6d7e8f
  ordo memory forget --template weekly-report
  ordo memory forget --namespace clarification --all
  ordo memory forget --all --user alice      # everything alice's runs taught`,
		Args: args(0, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			space, err := patterns.ParseNamespace(ns)
			if err != nil {
				return err
			}
			var id string
			switch {
			case len(a) == 1 && template != "":
				return usageError(errors.New("forget takes an ID or --template NAME, not both"))
			case template != "":
				if space != "" && space != patterns.NSWorkflow {
					return usageError(fmt.Errorf("--template names a workflow template, not a %s record", space))
				}
				id, space = template, patterns.NSWorkflow
			case len(a) == 1:
				id = a[0]
			case !all:
				return usageError(fmt.Errorf("forget every %s record of %q? say so with --all (or give an ID or --template NAME)", nsLabel(space), user))
			}
			if id != "" && all {
				return usageError(errors.New("--all deletes a whole namespace; it takes no ID or --template"))
			}
			return g.withPatterns(func(m *patterns.Memory) error {
				n, err := m.Forget(cmd.Context(), user, space, id)
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.io.Out, map[string]any{"forgot": n, "namespace": nsLabel(space), "user": user})
				}
				_, err = fmt.Fprintf(g.io.Out, "forgot %d %s record(s) of %q\n", n, nsLabel(space), user)
				return err
			})
		},
	}
	userFlag(cmd, &user)
	namespaceFlag(cmd, &ns)
	cmd.Flags().StringVar(&template, "template", "", "forget the saved template of this name")
	_ = cmd.RegisterFlagCompletionFunc("template", g.completeTemplate(&user))
	cmd.Flags().BoolVar(&all, "all", false, "confirm deleting every record of the namespace")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"forgot": N, "namespace", "user"}`)
	return cmd
}

func nsLabel(ns patterns.Namespace) string {
	if ns == "" {
		return "memory"
	}
	return string(ns)
}

// parseInputs reads --input ACTION.FIELD=VALUE flags: VALUE is JSON when it
// parses as JSON (5, true, {"a":1}, "quoted"), else plain text.
func parseInputs(flags []string) (map[string]any, error) {
	out := map[string]any{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || !strings.Contains(k, ".") {
			return nil, usageError(fmt.Errorf("--input %q: want ACTION_ID.FIELD=VALUE", f))
		}
		if _, dup := out[k]; dup {
			return nil, usageError(fmt.Errorf("--input %s is given twice", k))
		}
		val, err := contracts.DecodeJSON([]byte(v))
		if err != nil || v == "" {
			val = v
		}
		out[k] = val
	}
	return out, nil
}
