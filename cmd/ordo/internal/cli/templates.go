package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/mcpserver"
	"github.com/ordo-run/ordo/memory/patterns"
)

func newTemplatesCmd(g *globals) *cobra.Command {
	return group(&cobra.Command{
		Use:   "templates",
		Short: "List, show and delete saved workflow templates, per user",
		Long: `A template is a completed run's plan saved under a name ('ordo runs save-template', MCP
save_template), run again with new inputs and no planner call ('ordo run --template',
MCP run_template). Templates live in the user's pattern memory, which also counts how
many runs from each completed or failed; the user is 'local' unless --user names another.`,
		Example: `  ordo templates list
  ordo templates show weekly-report
  ordo templates delete weekly-report --user alice`,
	}, newTemplatesListCmd(g), newTemplatesShowCmd(g), newTemplatesDeleteCmd(g))
}

func newTemplatesListCmd(g *globals) *cobra.Command {
	var user string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the user's templates by name",
		Example: "  ordo templates list\n  ordo templates list --json | jq '.templates[].name'",
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withPatterns(func(m *patterns.Memory) error {
				ts, err := m.Templates(cmd.Context(), user)
				if err != nil {
					return err
				}
				views := make([]mcpserver.TemplateView, len(ts))
				for i, t := range ts {
					views[i] = mcpserver.NewTemplateView(t)
				}
				if asJSON {
					return writeJSON(g.io.Out, map[string]any{"templates": views, "count": len(views)})
				}
				if len(views) == 0 {
					_, err := fmt.Fprintf(g.io.Out, "no templates for %q (ordo runs save-template RUN_ID NAME saves one)\n", user)
					return err
				}
				for _, v := range views {
					fmt.Fprintf(g.io.Out, "%-24s %d actions  %d ok, %d failed  %s\n", v.Name, len(v.Actions), v.Successes, v.Failures, v.Goal)
				}
				return nil
			})
		},
	}
	userFlag(cmd, &user)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"templates": [...], "count": N}, as MCP list_templates`)
	return cmd
}

func newTemplatesShowCmd(g *globals) *cobra.Command {
	var user string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a template: its goal, actions and the inputs 'ordo run --template' may set",
		Example: `  ordo templates show weekly-report
  ordo templates show weekly-report --json`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withPatterns(func(m *patterns.Memory) error {
				t, err := m.Template(cmd.Context(), user, a[0])
				if err != nil {
					return err
				}
				v := mcpserver.NewTemplateView(t)
				if asJSON {
					return writeJSON(g.io.Out, v)
				}
				w := g.io.Out
				how := "saved"
				if v.Learned {
					how = "learned from runs that completed"
				}
				fmt.Fprintf(w, "template %s of %q: %s\n%s %s; runs from it: %d completed, %d failed\n",
					v.Name, user, v.Goal, how, v.SavedAt.Format("2006-01-02 15:04"), v.Successes, v.Failures)
				var inputs []string
				for _, act := range v.Actions {
					fmt.Fprintf(w, "  %s: %s\n", act.ID, act.Tool)
					for k := range act.Inputs {
						inputs = append(inputs, act.ID+"."+k)
					}
				}
				sort.Strings(inputs)
				if len(inputs) > 0 {
					fmt.Fprintf(w, "inputs (--input KEY=VALUE): %s\n", strings.Join(inputs, ", "))
				}
				return nil
			})
		},
	}
	cmd.ValidArgsFunction = g.completeTemplate(&user)
	userFlag(cmd, &user)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the template as MCP list_templates shows it")
	return cmd
}

// newTemplatesDeleteCmd is 'ordo memory forget --template NAME' under the
// name people look for.
func newTemplatesDeleteCmd(g *globals) *cobra.Command {
	var user string
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "delete NAME",
		Short:   "Delete a saved template (as 'ordo memory forget --template NAME')",
		Example: "  ordo templates delete weekly-report",
		Args:    args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withPatterns(func(m *patterns.Memory) error {
				if _, err := m.Forget(cmd.Context(), user, patterns.NSWorkflow, a[0]); err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.io.Out, map[string]any{"deleted": a[0], "user": user})
				}
				_, err := fmt.Fprintf(g.io.Out, "deleted template %q of %q\n", a[0], user)
				return err
			})
		},
	}
	cmd.ValidArgsFunction = g.completeTemplate(&user)
	userFlag(cmd, &user)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"deleted": NAME, "user"}`)
	return cmd
}
