package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ordo-run/ordo/agent"
	"github.com/ordo-run/ordo/cmd/ordo/internal/app"
	"github.com/ordo-run/ordo/cmd/ordo/internal/console"
	"github.com/ordo-run/ordo/contracts"
	"github.com/ordo-run/ordo/recommender"
)

func newToolsCmd(g *globals) *cobra.Command {
	return group(&cobra.Command{
		Use:   "tools",
		Short: "List, search and try the tool catalog; evaluate the recommender",
		Example: `  ordo tools list
  ordo tools search "post a message to a channel"
  ordo tools call text.join --input '{"items": ["a", "b"]}'
  ordo tools eval --tools tools.jsonl --queries queries.jsonl`,
	}, newToolsListCmd(g), newToolsSearchCmd(g), newToolsCallCmd(g), newToolsEvalCmd(g))
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
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Tool, c.RiskLevel, strings.Join(c.Tags, ","), src.Provider, console.Clip(c.Description, 60))
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
					out := make([]searchHit, len(hits))
					for i, h := range hits {
						out[i] = searchHit{Rank: i + 1, Tool: h.Tool, Score: h.Score, Contract: h.Contract}
					}
					return writeJSON(g.io.Out, out)
				}
				tw := tabwriter.NewWriter(g.io.Out, 2, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "RANK\tTOOL\tSCORE\tRISK\tDESCRIPTION")
				for i, h := range hits {
					fmt.Fprintf(tw, "%d\t%s\t%.2f\t%s\t%s\n", i+1, h.Tool, h.Score, h.Contract.RiskLevel, console.Clip(h.Contract.Description, 70))
				}
				if len(hits) == 0 {
					fmt.Fprintln(tw, "(no tools)")
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().IntVarP(&k, "k", "k", 5, "how many tools")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print [{rank, tool, score, contract}]")
	return cmd
}

// searchHit is one hit of `tools search --json`, named as search_tools
// names it. Score is relative to the best hit's (1): it orders the list
// and is no probability, so the table shows the rank instead.
type searchHit struct {
	Rank     int                `json:"rank"`
	Tool     string             `json:"tool"`
	Score    float64            `json:"score"`
	Contract contracts.Contract `json:"contract"`
}

func newToolsCallCmd(g *globals) *cobra.Command {
	var input string
	var yes, asJSON bool
	cmd := &cobra.Command{
		Use:   "call TOOL [--input JSON] [--yes]",
		Short: "Call one tool, to try it, as a one-action run with policy and contracts applied",
		Long: `Call TOOL once with the arguments in --input (a JSON object; @FILE reads it from a file;
default {}), exactly as the MCP gateway's direct call makes it: a one-action run with
the input checked against the tool's contract, policy applied (a denial fails the run,
error 2010; a tool policy confirms asks on stdin unless --yes), the result validated
and the call recorded ('ordo runs show ID'). The result is printed as JSON on stdout;
--json prints the whole run record instead. Exit codes as for 'ordo run'.`,
		Example: `  ordo tools call text.join --input '{"items": ["a", "b"]}'
  ordo tools call sheets.query --input @query.json --json | jq .steps
  ordo tools call chat.post_message --input '{"channel": "#general", "text": "hi"}' --yes`,
		Args:              args(1, 1),
		ValidArgsFunction: g.completeTool,
		RunE: func(cmd *cobra.Command, a []string) error {
			in, err := g.readInput(input)
			if err != nil {
				return err
			}
			return g.withApp(cmd, func(ap *app.App) error {
				req := agent.CallRequest{Tool: a[0], Args: in, UserID: LocalUser, Scopes: ap.ScopesFor(LocalUser)}
				confirm := func(ctx context.Context, id string, d contracts.Decision) (*contracts.Run, error) {
					return ap.Engine.Confirm(ctx, id, d, in)
				}
				return g.driveWith(cmd.Context(), ap, asJSON, func(ctx context.Context) (*contracts.Run, error) {
					run, err := ap.Engine.Call(ctx, req)
					if yes && err == nil && run.Status == contracts.RunInterrupted && run.Interrupt != nil &&
						run.Interrupt.Kind == contracts.InterruptStepApproval {
						fmt.Fprintln(g.io.Err, "--yes: approving the call policy asks to confirm")
						return confirm(ctx, run.ID, contracts.Decision{Kind: contracts.DecisionApprove, By: LocalUser, Note: "--yes"})
					}
					return run, err
				}, confirm)
			})
		},
	}
	cmd.Flags().StringVar(&input, "input", "{}", "the tool's arguments: a JSON object, or @FILE (@-: stdin)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "approve the call if policy asks to confirm it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run record as JSON on stdout instead of the result")
	return cmd
}

// readInput reads --input: a JSON object inline, from @FILE, or from
// stdin for @- (as --plan - does).
func (g *globals) readInput(arg string) (json.RawMessage, error) {
	data := []byte(arg)
	if name, ok := strings.CutPrefix(arg, "@"); ok {
		var err error
		if data, err = g.readFile(name); err != nil {
			return nil, contracts.Errorf(contracts.CodeInvalidInput, "--input: %w", err).With("field", "input")
		}
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return nil, contracts.Errorf(contracts.CodeInvalidInput, "--input must be a JSON object, e.g. '{\"text\": \"hi\"}'").With("field", "input")
	}
	return json.RawMessage(data), nil
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
