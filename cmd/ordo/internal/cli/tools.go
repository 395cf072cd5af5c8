package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender"
)

func newToolsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List and search the tool catalog; evaluate the recommender",
		Example: `  ordo tools list
  ordo tools search "post a message to a channel"
  ordo tools eval --tools tools.jsonl --queries queries.jsonl`,
	}
	cmd.AddCommand(newToolsListCmd(g), newToolsSearchCmd(g), newToolsEvalCmd(g))
	return cmd
}

// withApp assembles Ordo (plugins started) for a one-shot command.
func (g *globals) withApp(cmd *cobra.Command, fn func(*app.App) error) error {
	cfg, log, err := g.load()
	if err != nil {
		return err
	}
	a, err := app.Open(cmd.Context(), cfg, log, app.Options{Env: g.io.Env})
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(a)
}

func newToolsListCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List every tool in the catalog with its risk, tags and source",
		Example: "  ordo tools list\n  ordo tools list --json | jq '.[].tool'",
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withApp(cmd, func(a *app.App) error {
				tools := a.Host.List()
				if asJSON {
					cs := make([]contracts.Contract, len(tools))
					for i, t := range tools {
						cs[i] = t.Contract
					}
					return writeJSON(g.io.Out, cs)
				}
				tw := tabwriter.NewWriter(g.io.Out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TOOL\tRISK\tTAGS\tSOURCE\tDESCRIPTION")
				for _, t := range tools {
					src, _ := a.Host.Source(t.Name())
					c := t.Contract
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Tool, c.RiskLevel, strings.Join(c.Tags, ","), src.Provider, clip(c.Description, 60))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the contracts as JSON")
	return cmd
}

func newToolsSearchCmd(g *globals) *cobra.Command {
	var k int
	var asJSON bool
	cmd := &cobra.Command{
		Use:     `search "QUERY"`,
		Short:   "Rank catalog tools for a request, as the planner's candidates are chosen",
		Example: `  ordo tools search "read a spreadsheet and summarise it" -k 3`,
		Args:    args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.withApp(cmd, func(ap *app.App) error {
				hits, err := ap.Recommender.Search(cmd.Context(), a[0], recommender.SearchOptions{K: k})
				if err != nil {
					return err
				}
				if asJSON {
					return writeJSON(g.io.Out, hits)
				}
				tw := tabwriter.NewWriter(g.io.Out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "RANK\tTOOL\tSCORE\tDESCRIPTION")
				for i, h := range hits {
					fmt.Fprintf(tw, "%d\t%s\t%.3f\t%s\n", i+1, h.Tool, h.Score, clip(h.Contract.Description, 60))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().IntVarP(&k, "k", "k", 5, "how many tools")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newToolsEvalCmd(g *globals) *cobra.Command {
	var toolsPath, queriesPath string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "eval --tools FILE --queries FILE",
		Short: "Measure the recommender on a tool-retrieval set (R@1, R@5, MRR@10, Full@5/10, latency)",
		Long: `Index the tools of a JSON-lines file with the offline embedder and rank each query of a
JSON-lines query file, reporting recall, MRR, full-coverage for multi-tool queries, query
latency and index build time. See docs/recommender.md for the file formats.`,
		Example: `  ordo tools eval --tools seal-tools/tools.jsonl --queries seal-tools/queries-dev.jsonl
  ordo tools eval --tools t.jsonl --queries q.jsonl --json`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if toolsPath == "" || queriesPath == "" {
				return usageError(fmt.Errorf("eval needs --tools FILE and --queries FILE"))
			}
			rep, err := recommender.Eval(cmd.Context(), toolsPath, queriesPath, recommender.EvalOptions{})
			if err != nil {
				return err
			}
			if asJSON {
				return rep.WriteJSON(g.io.Out)
			}
			return rep.WriteText(g.io.Out)
		},
	}
	cmd.Flags().StringVar(&toolsPath, "tools", "", "tools file (JSON lines)")
	cmd.Flags().StringVar(&queriesPath, "queries", "", "queries file (JSON lines)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
